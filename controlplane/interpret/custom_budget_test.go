package interpret_test

import (
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// TestIsBudgetExceeded: a call (or a load) that runs out of a budget is
// told apart from a script that fails or returns a wrong result, also when
// the script catches the first budget error with pcall, and through New's
// refusal and the broken kind's errors.
func TestIsBudgetExceeded(t *testing.T) {
	cases := []struct {
		name   string
		script string
		budget bool
	}{
		{"endless loop", "function GetReplicas(obj)\n  while true do end\nend", true},
		{"endless loop under pcall", "function GetReplicas(obj)\n  while true do pcall(function() while true do end end) end\nend", true},
		{"string.rep bomb", "function GetReplicas(obj)\n  return #string.rep('x', 1e10), nil\nend", true},
		{"string.rep bomb under pcall", "function GetReplicas(obj)\n  local ok = pcall(string.rep, 'x', 1e10)\n  return 1, nil\nend", true},
		{"doubling string", "function GetReplicas(obj)\n  local s = 'x'\n  for i = 1, 64 do s = s .. s end\n  return 1, nil\nend", true},
		{"runtime error", "function GetReplicas(obj)\n  local x = nil\n  return x.y, nil\nend", false},
		{"error()", "function GetReplicas(obj)\n  error('no')\nend", false},
		{"wrong result", "function GetReplicas(obj)\n  return 'three', nil\nend", false},
		{"stack overflow", "local function f(n) return f(n + 1) + 1 end\nfunction GetReplicas(obj)\n  return f(1), nil\nend", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("w", api.CustomizationRules{ReplicaResource: lua(c.script)})})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = in.GetReplicas(obj(t, widget))
			if err == nil {
				t.Fatal("no error")
			}
			if got := interpret.IsBudgetExceeded(err); got != c.budget {
				t.Errorf("IsBudgetExceeded(%q) = %v, want %v", err, got, c.budget)
			}
		})
	}
	t.Run("load", func(t *testing.T) {
		in, err := interpret.New([]api.ResourceInterpreterCustomization{
			widgetRIC("w", api.CustomizationRules{ReplicaResource: lua("while true do end")}),
		})
		if !interpret.IsBudgetExceeded(err) {
			t.Errorf("New: IsBudgetExceeded(%v) = false", err)
		}
		if _, _, err := in.GetReplicas(obj(t, widget)); !interpret.IsBudgetExceeded(err) {
			t.Errorf("GetReplicas of the broken kind: IsBudgetExceeded(%v) = false", err)
		}
	})
	if interpret.IsBudgetExceeded(nil) {
		t.Error("IsBudgetExceeded(nil) = true")
	}
}
