package interpret_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Widget"}

// recordingGuard refuses a kind once told it exceeded a budget, as the
// continuous driver's cache does.
type recordingGuard struct {
	mu       sync.Mutex
	exceeded []interpret.BudgetExceeded
}

func (g *recordingGuard) Refused(kind schema.GroupVersionKind) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.exceeded {
		if b.Kind == kind {
			return errors.New("refused: " + b.Err.Error())
		}
	}
	return nil
}

func (g *recordingGuard) Exceeded(b interpret.BudgetExceeded) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.exceeded = append(g.exceeded, b)
}

// TestGuardRefusesKindAfterBudget: the first call that runs out of a budget
// is reported to the guard with the kind, customization and operation;
// from then on every customizable operation of that kind fails with the
// guard's refusal without running a script, and other kinds are untouched.
func TestGuardRefusesKindAfterBudget(t *testing.T) {
	spin := widgetRIC("spin", api.CustomizationRules{
		ReplicaResource:      lua("function GetReplicas(obj)\n  while true do end\nend"),
		HealthInterpretation: lua("function InterpretHealth(obj)\n  return true\nend"),
	})
	other := api.ResourceInterpreterCustomization{}
	other.Name = "gadget"
	other.Spec.Target = api.CustomizationTarget{APIVersion: "example.io/v1", Kind: "Gadget"}
	other.Spec.Customizations.ReplicaResource = lua("function GetReplicas(obj)\n  return 2, nil\nend")
	base, err := interpret.New([]api.ResourceInterpreterCustomization{spin, other})
	if err != nil {
		t.Fatal(err)
	}
	g := &recordingGuard{}
	in := base.WithGuard(g)
	w := obj(t, widget)
	if _, _, err := in.GetReplicas(w); !interpret.IsBudgetExceeded(err) {
		t.Fatalf("first call: %v, want a budget error", err)
	}
	if len(g.exceeded) != 1 {
		t.Fatalf("guard told %d times, want 1", len(g.exceeded))
	}
	if b := g.exceeded[0]; b.Kind != widgetGVK || b.Customization != "spin" || b.Operation != "replicaResource" {
		t.Errorf("guard told %+v", b)
	}
	for i := 0; i < 3; i++ {
		_, _, err := in.GetReplicas(w)
		if err == nil || !strings.HasPrefix(err.Error(), "replicaResource: refused:") {
			t.Errorf("call %d: %v, want the guard's refusal", i, err)
		}
	}
	// The health script is fine, but the kind is refused as a whole.
	if h, msg := in.InterpretHealth(w); h != interpret.Unknown || !strings.Contains(msg, "refused:") {
		t.Errorf("health = %v %q, want Unknown with the refusal", h, msg)
	}
	if len(g.exceeded) != 1 {
		t.Errorf("guard told %d times, want 1: a refused kind runs no script", len(g.exceeded))
	}
	gadget := obj(t, "apiVersion: example.io/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\n")
	if n, _, err := in.GetReplicas(gadget); err != nil || n != 2 {
		t.Errorf("other kind: %d, %v; want 2", n, err)
	}
	// The Interpreter without the guard is unchanged.
	if _, _, err := base.GetReplicas(w); !interpret.IsBudgetExceeded(err) {
		t.Errorf("unguarded: %v, want the script to run", err)
	}
}

// TestMergeAndRefused: kinds loaded on their own join into one
// Interpreter, and a kind that could not load fails with its refusal.
func TestMergeAndRefused(t *testing.T) {
	widgets, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("w", api.CustomizationRules{ReplicaResource: lua("function GetReplicas(obj) return 7, nil end")})})
	if err != nil {
		t.Fatal(err)
	}
	gadgetGVK := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Gadget"}
	in := interpret.Merge(widgets, nil, interpret.Refused(gadgetGVK, errors.New("did not load")))
	if n, _, err := in.GetReplicas(obj(t, widget)); err != nil || n != 7 {
		t.Errorf("widget: %d, %v; want 7", n, err)
	}
	gadget := obj(t, "apiVersion: example.io/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\n")
	if _, _, err := in.GetReplicas(gadget); err == nil || err.Error() != "replicaResource: did not load" {
		t.Errorf("gadget: %v, want the refusal", err)
	}
	if err := in.Refusal(gadgetGVK); err == nil {
		t.Error("Refusal(gadget) = nil")
	}
	if n, _, err := in.GetReplicas(makeDeployment(3).Obj()); err != nil || n != 3 {
		t.Errorf("built-in kind: %d, %v; want 3", n, err)
	}
}
