package interpret_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// widgetRIC is a customization of example.io/v1 Widget.
func widgetRIC(name string, rules api.CustomizationRules) api.ResourceInterpreterCustomization {
	return api.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target:         api.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Widget"},
			Customizations: rules,
		},
	}
}

func lua(src string) *api.LuaScript { return &api.LuaScript{LuaScript: src} }

const widget = `
apiVersion: example.io/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {replicas: 3}
`

// TestScriptFailures runs scripts that fail, escape the sandbox or run out
// of budget: each call returns an error naming the customization, the
// operation and the line, and none takes long.
func TestScriptFailures(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   []string
	}{
		{"runtime error", "function GetReplicas(obj)\n  local x = nil\n  return x.y, nil\nend", []string{`"broken"`, "replicaResource", "replicaResource:3:", "attempt to index"}},
		{"endless loop", "function GetReplicas(obj)\n  while true do\n  end\nend", []string{"replicaResource:3:", "budget exhausted", "instructions"}},
		{"endless recursion", "local function f(n) return f(n + 1) + 1 end\nfunction GetReplicas(obj)\n  return f(1), nil\nend", []string{"replicaResource", "stack overflow"}},
		{"doubling string", "function GetReplicas(obj)\n  local s = 'x'\n  for i = 1, 64 do\n    s = s .. s\n  end\n  return 1, nil\nend", []string{"replicaResource:", "budget exhausted", "bytes"}},
		{"table of big strings", "function GetReplicas(obj)\n  local t, s = {}, string.rep('x', 1000000)\n  for i = 1, 100000 do\n    t[i] = s .. i\n  end\n  return 1, nil\nend", []string{"replicaResource:4:", "budget exhausted", "bytes"}},
		{"huge string.rep", "function GetReplicas(obj)\n  local s = string.rep('x', 1e10)\n  return 1, nil\nend", []string{"replicaResource:2:", "string.rep"}},
		{"huge string.format width", "function GetReplicas(obj)\n  local s = string.format('%099999999999d', 1)\n  return 1, nil\nend", []string{"replicaResource:2:", "string.format"}},
		{"huge string.gsub", "function GetReplicas(obj)\n  local s = string.rep('x', 1000000)\n  s = s:gsub('x', s)\n  return 1, nil\nend", []string{"replicaResource:3:", "string.gsub"}},
		{"string.rep overflowing a count", "function GetReplicas(obj)\n  local s = string.rep('xxxx', 4611686018427387904)\n  return 1, nil\nend", []string{"replicaResource:2:", "string.rep"}},
		{"growing table", "function GetReplicas(obj)\n  local t = {}\n  local i = 1\n  while true do\n    t[i] = i\n    i = i + 1\n  end\nend", []string{"replicaResource:", "budget exhausted"}},
		{"no os library but time and date", "function GetReplicas(obj)\n  os.exit(1)\nend", []string{"replicaResource:2:", "os.exit is not available", "only os.time and os.date are"}},
		{"no io library", "function GetReplicas(obj)\n  io.open('/etc/passwd')\nend", []string{"replicaResource:2:", "the io library is not available"}},
		{"require of another module", "local os = require('os')\nfunction GetReplicas(obj) return 1, nil end", []string{"replicaResource:1:", `module "os" is not available`}},
		{"loadstring", "function GetReplicas(obj)\n  loadstring('return 1')()\nend", []string{"replicaResource:2:", "loadstring is not available"}},
		{"dofile", "function GetReplicas(obj)\n  dofile('/etc/passwd')\nend", []string{"replicaResource:2:", "dofile is not available"}},
		{"wrong result type", "function GetReplicas(obj)\n  return 'three', nil\nend", []string{`"broken"`, "replicaResource", "want a whole number"}},
		{"negative replicas", "function GetReplicas(obj)\n  return -1, nil\nend", []string{"want a whole number from 0"}},
		{"self-containing result", "function GetReplicas(obj)\n  local t = {}\n  t.t = t\n  return 1, t\nend", []string{"nested more than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("broken", api.CustomizationRules{ReplicaResource: lua(c.script)})})
			start := time.Now()
			if err == nil { // a script that fails while loading fails in New
				_, _, err = in.GetReplicas(obj(t, widget))
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %s", took)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "stack traceback") {
				t.Errorf("error carries a traceback: %q", err)
			}
		})
	}
}

// TestNewRefuses checks the customizations New refuses up front.
func TestNewRefuses(t *testing.T) {
	ok := lua("function InterpretHealth(obj) return true end")
	cases := []struct {
		name string
		rics []api.ResourceInterpreterCustomization
		want string
	}{
		{"syntax error", []api.ResourceInterpreterCustomization{widgetRIC("bad", api.CustomizationRules{HealthInterpretation: lua("function InterpretHealth(obj)\n  return obj.status ==\nend")})},
			`resource interpreter customization "bad": healthInterpretation: healthInterpretation line:3`},
		{"missing function", []api.ResourceInterpreterCustomization{widgetRIC("bad", api.CustomizationRules{HealthInterpretation: lua("function Healthy(obj) return true end")})},
			`"bad": healthInterpretation: the script defines no function InterpretHealth`},
		{"endless top level", []api.ResourceInterpreterCustomization{widgetRIC("bad", api.CustomizationRules{HealthInterpretation: lua("while true do end")})},
			`"bad": healthInterpretation: healthInterpretation:1: budget exhausted`},
		{"two for one operation", []api.ResourceInterpreterCustomization{widgetRIC("b", api.CustomizationRules{HealthInterpretation: ok}), widgetRIC("a", api.CustomizationRules{HealthInterpretation: ok})},
			`customization "b": spec.customizations.healthInterpretation: example.io/v1 Widget already has one, from customization "a"`},
		{"componentResource without its function", []api.ResourceInterpreterCustomization{widgetRIC("multi", api.CustomizationRules{ComponentResource: lua("function GetReplicas(obj) return {} end")})},
			`"multi": componentResource: the script defines no function GetComponents`},
		{"no target kind", []api.ResourceInterpreterCustomization{func() api.ResourceInterpreterCustomization {
			r := widgetRIC("nokind", api.CustomizationRules{HealthInterpretation: ok})
			r.Spec.Target.Kind = ""
			return r
		}()}, `"nokind": spec.target.kind: Required value`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := interpret.New(c.rics)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	// Two customizations of one kind for different operations combine.
	in, err := interpret.New([]api.ResourceInterpreterCustomization{
		widgetRIC("health", api.CustomizationRules{HealthInterpretation: lua("function InterpretHealth(obj) return obj.spec.replicas > 2 end")}),
		widgetRIC("replicas", api.CustomizationRules{ReplicaResource: lua("function GetReplicas(obj) return obj.spec.replicas, nil end")}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := in.InterpretHealth(obj(t, widget)); h != interpret.Healthy {
		t.Errorf("health = %s, want Healthy", h)
	}
	if n, req, err := in.GetReplicas(obj(t, widget)); n != 3 || req != nil || err != nil {
		t.Errorf("GetReplicas = %d, %v, %v; want 3, nil, nil", n, req, err)
	}
}

// TestScriptResultsChecked checks results that break the operation's
// contract, and that a failing health script makes the object Unknown.
func TestScriptResultsChecked(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("w", api.CustomizationRules{
		ReplicaRevision:          lua("function ReviseReplica(obj, n)\n  obj.metadata.name = 'other'\n  return obj\nend"),
		HealthInterpretation:     lua("function InterpretHealth(obj)\n  return obj.status.ready\nend"),
		DependencyInterpretation: lua("function GetDependencies(obj)\n  return {{apiVersion = 'v1', kind = 'ConfigMap', name = 'c', labelSelector = {matchLabels = {a = 'b'}}}}\nend"),
		StatusReflection:         lua("function ReflectStatus(obj)\n  return 3\nend"),
	})})
	if err != nil {
		t.Fatal(err)
	}
	w := obj(t, widget)
	if err := in.ReviseReplica(w, 1); err == nil || !strings.Contains(err.Error(), "want the object it was given") {
		t.Errorf("ReviseReplica renaming the object: %v", err)
	}
	if h, msg := in.InterpretHealth(w); h != interpret.Unknown || !strings.Contains(msg, "healthInterpretation:2:") {
		t.Errorf("InterpretHealth of a failing script = %s %q, want Unknown naming line 2", h, msg)
	}
	if _, err := in.GetDependencies(w); err == nil || !strings.Contains(err.Error(), "labelSelector") {
		t.Errorf("GetDependencies with a labelSelector: %v", err)
	}
	if _, err := in.ReflectStatus(w); err == nil || !strings.Contains(err.Error(), "want a table or nil") {
		t.Errorf("ReflectStatus returning a number: %v", err)
	}
}

// TestBrokenKindFailsEveryOperation: New reports a refused customization
// and returns an Interpreter in which its kind fails every customizable
// operation, not half built-in, while other kinds keep working.
func TestBrokenKindFailsEveryOperation(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{
		widgetRIC("good", api.CustomizationRules{HealthInterpretation: lua("function InterpretHealth(obj) return true end")}),
		widgetRIC("bad", api.CustomizationRules{ReplicaResource: lua("function GetReplicas(obj)\n  return (\nend")}),
	})
	if err == nil || !strings.Contains(err.Error(), `"bad": replicaResource: replicaResource line:3`) {
		t.Fatalf("New error = %v", err)
	}
	w := obj(t, widget)
	want := `resource interpreter customization "bad"`
	if _, _, err := in.GetReplicas(w); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("GetReplicas: %v", err)
	}
	if err := in.ReviseReplica(w, 1); err == nil || !strings.Contains(err.Error(), "replicaRevision: "+want) {
		t.Errorf("ReviseReplica: %v", err)
	}
	if _, err := in.Retain(w, w.DeepCopy()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Retain: %v", err)
	}
	if h, msg := in.InterpretHealth(w); h != interpret.Unknown || !strings.Contains(msg, want) {
		t.Errorf("InterpretHealth = %s %q, want Unknown naming the refusal", h, msg)
	}
	if n, _, err := in.GetReplicas(makeObj("Deployment").Spec("replicas", 2).Obj()); err != nil || n != 2 {
		t.Errorf("a Deployment beside the broken kind: %d, %v", n, err)
	}
}

// TestGuardedStringFunctionsWork: the guarded string functions behave as
// Lua's for ordinary sizes, and the kube library is there.
func TestGuardedStringFunctionsWork(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("strings", api.CustomizationRules{ReplicaResource: lua(`
local kube = require("kube")
function GetReplicas(obj)
  local s = string.format("%05.1f|%s", 2.25, string.rep("ab", 3))
  local g = ("a-b-c"):gsub("-", "+")
  if s ~= "002.2|ababab" and s ~= "002.3|ababab" then error("format/rep gave " .. s) end
  if g ~= "a+b+c" then error("gsub gave " .. g) end
  if kube.resourceAdd("100m", "1") ~= "1100m" then error("resourceAdd") end
  return kube.getResourceQuantity("3"), nil
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := in.GetReplicas(obj(t, widget)); err != nil || n != 3 {
		t.Fatalf("GetReplicas = %d, %v; want 3", n, err)
	}
}
