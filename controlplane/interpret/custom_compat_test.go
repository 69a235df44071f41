package interpret_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestAggregateStatusStatusItems follows Karmada's VM.AggregateStatus: a
// script gets statusItems nil when no member has an item, so the common
// "if statusItems == nil then initialise the status" branch runs, and a
// table (one entry per member, reported or not) otherwise.
func TestAggregateStatusStatusItems(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("agg", api.CustomizationRules{StatusAggregation: lua(`
function AggregateStatus(desiredObj, statusItems)
  if desiredObj.status == nil then desiredObj.status = {} end
  if statusItems == nil then
    desiredObj.status.phase = "Initialised"
    return desiredObj
  end
  desiredObj.status.phase = "Aggregated"
  desiredObj.status.members = #statusItems
  return desiredObj
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		items []interpret.Member
		want  map[string]any
	}{
		{"no member: nil", nil, map[string]any{"phase": "Initialised"}},
		{"an empty list is no member either", []interpret.Member{}, map[string]any{"phase": "Initialised"}},
		{"a member that has not reported is an item", []interpret.Member{{Cluster: "east"}},
			map[string]any{"phase": "Aggregated", "members": int64(1)}},
		{"every member is an item", []interpret.Member{{Cluster: "west", Applied: true, Status: map[string]any{"ready": int64(1)}}, {Cluster: "east"}},
			map[string]any{"phase": "Aggregated", "members": int64(2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.AggregateStatus(obj(t, widget), tc.items)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReflectStatusEmptyTables follows Karmada's VM.ReflectStatus, which
// converts the script's table with no reference object: an empty table
// anywhere under the reflected status is dropped (Lua cannot tell an empty
// list from an empty object), even where the member's status has one.
func TestReflectStatusEmptyTables(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("reflect", api.CustomizationRules{StatusReflection: lua(`
function ReflectStatus(observedObj)
  return observedObj.status
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		status string
		want   map[string]any
	}{
		{"an empty list in the member's status is dropped",
			`{replicas: 2, conditions: []}`, map[string]any{"replicas": int64(2)}},
		{"an empty object in the member's status is dropped",
			`{replicas: 2, selector: {}}`, map[string]any{"replicas": int64(2)}},
		{"nested empty tables are dropped, their parent kept",
			`{replicas: 2, sub: {a: [], b: {}}}`, map[string]any{"replicas": int64(2), "sub": map[string]any{}}},
		{"an empty table in a list is dropped from it",
			`{items: [{}, {name: x}]}`, map[string]any{"items": []any{map[string]any{"name": "x"}}}},
		{"a status of empty tables only is an empty object, not none",
			`{conditions: [], selector: {}}`, map[string]any{}},
		{"full tables are kept",
			`{conditions: [{type: Ready}], labels: {a: b}}`,
			map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}, "labels": map[string]any{"a": "b"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.ReflectStatus(obj(t, widget+"status: "+tc.status+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reflected status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenSafeOs follows Karmada's safe os library (OpenSafeOs): a script
// has os.time and os.date, reading the Interpreter's clock, FixedTime
// unless WithClock gives one, so preview and Terraform stay reproducible
// while continuous mode reads real time; every other os function raises.
func TestOpenSafeOs(t *testing.T) {
	live := time.Date(2026, 3, 9, 14, 5, 7, 0, time.UTC)
	cases := []struct {
		name string
		opts []interpret.Option
		expr string
		want any
	}{
		{"os.time without a clock is the fixed time", nil, `os.time()`, int64(0)},
		{"os.date without a clock is the fixed time", nil, `os.date("!%Y-%m-%dT%H:%M:%SZ")`, "1970-01-01T00:00:00Z"},
		{"os.time reads the given clock", []interpret.Option{interpret.WithClock(func() time.Time { return live })}, `os.time()`, live.Unix()},
		{"os.date reads the given clock (Karmada's condition timestamps)", []interpret.Option{interpret.WithClock(func() time.Time { return live })},
			`os.date("!%Y-%m-%dT%H:%M:%SZ")`, "2026-03-09T14:05:07Z"},
		{"a local format is UTC too", []interpret.Option{interpret.WithClock(func() time.Time { return live.In(time.FixedZone("x", 3600)) })},
			`os.date("%H:%M %Z")`, "14:05 UTC"},
		{"os.date of a given time, C's %c", nil, `os.date("%c", 86400 * 365)`, "Fri Jan  1 00:00:00 1971"},
		{"strftime conversions", []interpret.Option{interpret.WithClock(func() time.Time { return live })},
			`os.date("%a %A %b %B %d %e %j %m %p %I %y %w %u %F %T %% %Q")`, "Mon Monday Mar March 09  9 068 03 PM 02 26 1 1 2026-03-09 14:05:07 % %Q"},
		{"os.date('*t') is a table of the fields", []interpret.Option{interpret.WithClock(func() time.Time { return live })},
			`(function() local d = os.date("*t") return d.year .. "-" .. d.month .. "-" .. d.day .. " " .. d.hour .. ":" .. d.min .. ":" .. d.sec .. " w" .. d.wday .. " y" .. d.yday .. " " .. tostring(d.isdst) end)()`,
			"2026-3-9 14:5:7 w2 y68 false"},
		{"os.time of a table, noon by default", nil, `os.time({year = 2026, month = 3, day = 9})`, live.Truncate(24 * time.Hour).Add(12 * time.Hour).Unix()},
		{"os.time and os.date agree", []interpret.Option{interpret.WithClock(func() time.Time { return live })},
			`os.date("!%Y-%m-%dT%H:%M:%SZ", os.time())`, "2026-03-09T14:05:07Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("clock", api.CustomizationRules{StatusReflection: lua(
				"function ReflectStatus(obj)\n  return {v = " + tc.expr + "}\nend")})}, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := in.ReflectStatus(obj(t, widget))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got["v"]); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.expr, diff)
			}
		})
	}
	for _, call := range []string{`os.exit(1)`, `os.getenv("HOME")`, `os.execute("true")`, `os.remove("/tmp/x")`, `os.clock()`, `os.date(string.rep("%c", 2000000))`, `os.time({year = 2026})`} {
		in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("os", api.CustomizationRules{HealthInterpretation: lua(
			"function InterpretHealth(obj)\n  local x = " + call + "\n  return true\nend")})})
		if err != nil {
			t.Fatal(err)
		}
		if h, msg := in.InterpretHealth(obj(t, widget)); h != interpret.Unknown || !strings.Contains(msg, "os.") {
			t.Errorf("%s: %s %q, want Unknown naming the os function", call, h, msg)
		}
	}
}

// TestRetainScriptPaths follows Karmada's VM.Retain, whose result is the
// object Karmada applies: every field the script sets from observed is the
// member's, whether it changed a value the template sets or brought back
// one the template no longer sets. In server-side-apply terms each is a
// path taken out of what flotilla applies; an object emptied by that is
// not applied either.
func TestRetainScriptPaths(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("keep", api.CustomizationRules{Retention: lua(`
function Retain(desiredObj, observedObj)
  desiredObj.spec.paused = observedObj.spec.paused
  desiredObj.spec.extra = observedObj.spec.extra
  return desiredObj
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	const observed = "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {replicas: 3, paused: true, extra: {a: '1'}}\n"
	cases := []struct {
		name, desired string
		wantPaths     [][]string
		wantSpec      map[string]any
	}{
		{"a changed leaf is the member's", "spec: {replicas: 2, paused: false, extra: {a: '1'}}",
			[][]string{{"spec", "paused"}}, map[string]any{"replicas": int64(2), "extra": map[string]any{"a": "1"}}},
		{"fields the template dropped come back from observed", "spec: {replicas: 2}",
			[][]string{{"spec", "extra"}, {"spec", "paused"}}, map[string]any{"replicas": int64(2)}},
		{"a key the template dropped from an object is the member's", "spec: {replicas: 2, paused: true, extra: {b: '2'}}",
			[][]string{{"spec", "extra", "a"}, {"spec", "extra", "b"}}, map[string]any{"replicas": int64(2), "paused": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			desired := obj(t, "apiVersion: example.io/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"+tc.desired+"\n")
			paths, err := in.Retain(desired, obj(t, observed))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPaths, paths); diff != "" {
				t.Errorf("retained paths (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSpec, desired.Object["spec"]); diff != "" {
				t.Errorf("spec left to apply (-want +got):\n%s", diff)
			}
		})
	}
}
