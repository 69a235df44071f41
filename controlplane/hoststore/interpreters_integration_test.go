package hoststore_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

func customization(name, kind, script string) *configv1.ResourceInterpreterCustomization {
	return &configv1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target:         api.CustomizationTarget{APIVersion: "example.io/v1", Kind: kind},
			Customizations: api.CustomizationRules{ReplicaResource: &api.LuaScript{LuaScript: script}},
		},
	}
}

func object(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.io/v1")
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName("x")
	return u
}

// notified records the names Interpreters.Notify is called with.
type notified struct {
	mu    sync.Mutex
	names []string
}

func (n *notified) add(name string) { n.mu.Lock(); n.names = append(n.names, name); n.mu.Unlock() }

func (n *notified) has(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, got := range n.names {
		if got == name {
			return true
		}
	}
	return false
}

// TestInterpretersCacheAndGuard runs the cache against a real host: the
// interpreter is reused until a customization's generation changes (a
// status write does not count), a kind whose script runs out of a budget
// is refused with the recorded error until its customization changes,
// while other kinds keep working, and a kind that loads slowly is refused
// for the moment without holding up the others.
func TestInterpretersCacheAndGuard(t *testing.T) {
	f := controllertest.StartFleet(t, 0)
	hub, ctx := f.Hub, t.Context()
	var n notified
	is := hoststore.NewInterpreters()
	is.Notify = n.add

	if in, err := is.Load(ctx, hub); err != nil || in != nil {
		t.Fatalf("no customizations: %v, %v; want nil", in, err)
	}
	widget := customization("widget", "Widget", "function GetReplicas(obj)\n  while true do end\nend")
	gadget := customization("gadget", "Gadget", "function GetReplicas(obj) return 2, nil end")
	testkit.MustCreate(t, hub, widget)
	testkit.MustCreate(t, hub, gadget)

	in1, err := is.Load(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	in2, _ := is.Load(ctx, hub)
	if in1 != in2 {
		t.Error("a second load with the same customizations built a new interpreter")
	}

	t.Log("the first call over budget refuses the kind")
	if _, _, err := in1.GetReplicas(object("Widget")); !interpret.IsBudgetExceeded(err) {
		t.Fatalf("first call: %v, want a budget error", err)
	}
	start := time.Now()
	_, _, err = in2.GetReplicas(object("Widget"))
	if took := time.Since(start); err == nil || !strings.Contains(err.Error(), `is refused until resource interpreter customization "widget" changes`) || took > 50*time.Millisecond {
		t.Errorf("second call: %v after %v, want the recorded refusal at once", err, took)
	}
	if n, _, err := in2.GetReplicas(object("Gadget")); err != nil || n != 2 {
		t.Errorf("other kind: %d, %v; want 2", n, err)
	}
	if !n.has("widget") {
		t.Error("Notify was not told of widget")
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(widget), widget); err != nil {
		t.Fatal(err)
	}
	r := is.Report(widget)
	if !r.Loaded || r.Exceeded == nil || r.Exceeded.Operation != "replicaResource" {
		t.Errorf("report %+v, want loaded and exceeded in replicaResource", r)
	}

	t.Log("a status write is not a change")
	apimeta.SetStatusCondition(&widget.Status.Conditions, metav1.Condition{Type: configv1.ConditionReady, Status: metav1.ConditionFalse, Reason: configv1.ReasonBudgetExceeded, Message: "m"})
	if err := hub.Status().Update(ctx, widget); err != nil {
		t.Fatal(err)
	}
	in3, err := is.Load(ctx, hub)
	if err != nil || in3 != in1 {
		t.Errorf("after a status write: a new interpreter (%v)", err)
	}
	if _, _, err := in3.GetReplicas(object("Widget")); err == nil || !strings.Contains(err.Error(), "is refused until") {
		t.Errorf("after a status write: %v, want the recorded refusal", err)
	}

	t.Log("a new generation is loaded and runs")
	widget.Spec.Customizations.ReplicaResource.LuaScript = "function GetReplicas(obj) return 5, nil end"
	if err := hub.Update(ctx, widget); err != nil {
		t.Fatal(err)
	}
	in4, err := is.Load(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	if in4 == in3 {
		t.Error("a new generation kept the old interpreter")
	}
	if n, _, err := in4.GetReplicas(object("Widget")); err != nil || n != 5 {
		t.Errorf("changed widget: %d, %v; want 5", n, err)
	}

	t.Log("a kind that loads slowly is refused for now, the others go on")
	slow := hoststore.NewInterpreters()
	slow.LoadWait = time.Millisecond
	testkit.MustCreate(t, hub, customization("slow", "Slow", "local t = {}\nfor i = 1, 150000 do t[i] = i end\nfunction GetReplicas(obj) return 3, nil end"))
	in5, err := slow.Load(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := in5.GetReplicas(object("Slow")); err == nil || !strings.Contains(err.Error(), "did not load within 1ms") {
		t.Errorf("slow kind: %v, want refused for now", err)
	}
	testkit.Eventually(t, 10*time.Second, "the slow kind loaded", func() (bool, string) {
		in, err := slow.Load(ctx, hub)
		if err != nil {
			return false, err.Error()
		}
		n, _, err := in.GetReplicas(object("Slow"))
		return err == nil && n == 3, fmt.Sprint(n, err)
	})

	t.Log("continuous mode's scripts read the real clock (os.time), not the fixed one of preview and Terraform")
	testkit.MustCreate(t, hub, customization("clock", "Clock", "function GetReplicas(obj)\n  if os.time() > 1700000000 then return 1, nil end\n  return 0, nil\nend"))
	in6, err := is.Load(ctx, hub)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := in6.GetReplicas(object("Clock")); err != nil || n != 1 {
		t.Errorf("os.time() in continuous mode: %d, %v; want 1 (after 2023)", n, err)
	}
}
