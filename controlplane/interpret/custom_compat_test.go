package interpret_test

import (
	"testing"

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
