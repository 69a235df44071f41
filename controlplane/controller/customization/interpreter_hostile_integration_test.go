package customization_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// flowBound is how long a new or changed template may take to reach every
// member with hostile customizations in the host: generous, as the other
// tests' deadlines are; on a quiet host it takes well under a second.
const flowBound = 20 * time.Second

// hostileUnusedKinds is how many customizations spin at their top level
// for kinds nothing uses: each costs one instruction budget per load.
const hostileUnusedKinds = 8

// TestHostileCustomizationsDoNotStallTheFleet attacks the interpreter
// cache on a real host and real members: customizations whose top level
// spins, for kinds nothing uses, and one whose replicaResource spins for
// the Service kind a template uses, must not keep a new ConfigMap and
// Deployment, nor an update of the Deployment, from reaching the members
// in normal time (measured first without them); the spinning kind is
// refused with a Ready condition and an Event naming the customization,
// the kind, the operation and the budget; and the manager still stops
// promptly.
func TestHostileCustomizationsDoNotStallTheFleet(t *testing.T) {
	f := controllertest.StartFleet(t, 2)
	hub, ctx := f.Hub, t.Context()
	stop := f.StartControlPlane(t)

	t.Log("baseline: no customization")
	base := flowTemplates(t, f, "a")

	t.Log("hostile customizations")
	for i := range hostileUnusedKinds {
		testkit.MustCreate(t, hub, hostileCustomization(fmt.Sprintf("hostile-unused-%d", i), "example.io/v1", fmt.Sprintf("Unused%d", i),
			api.CustomizationRules{ReplicaResource: &api.LuaScript{LuaScript: "local t = {}\nwhile true do\n  t[#t + 1] = 1\nend\nfunction GetReplicas(obj) return 1, nil end"}}))
	}
	testkit.MustCreate(t, hub, hostileCustomization("hostile-service", "v1", "Service", api.CustomizationRules{
		ReplicaResource:      &api.LuaScript{LuaScript: "function GetReplicas(obj)\n  while true do\n  end\nend"},
		HealthInterpretation: &api.LuaScript{LuaScript: "function InterpretHealth(obj)\n  while true do\n  end\nend"},
	}))
	// The Service comes once the control plane has loaded its kind's
	// customization, so it is never placed by the built-in rules.
	testkit.Eventually(t, controllertest.Deadline, "hostile-service reported", func() (bool, string) {
		cond := customizationReady(t, hub, "hostile-service")
		return cond != nil, "no Ready condition"
	})
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "svc"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	testkit.MustCreate(t, hub, svc)
	controllertest.CreatePolicy(t, hub, apitest.MakePropagationPolicy("svc", "default").SelectName("v1", "Service", "svc").ClusterNames(f.Names...))

	hostile := flowTemplates(t, f, "b")
	t.Logf("time to every member: ConfigMap and Deployment %v without hostile customizations, %v with; Deployment update %v, %v",
		base.created.Round(time.Millisecond), hostile.created.Round(time.Millisecond), base.updated.Round(time.Millisecond), hostile.updated.Round(time.Millisecond))

	t.Log("the spinning kind is refused, reported on its customization")
	testkit.Eventually(t, controllertest.Deadline, "hostile-service Ready=False BudgetExceeded", func() (bool, string) {
		cond := customizationReady(t, hub, "hostile-service")
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != configv1.ReasonBudgetExceeded {
			return false, fmt.Sprintf("condition %+v", cond)
		}
		for _, want := range []string{"v1 Service", "replicaResource", `"hostile-service"`, "budget exhausted"} {
			if !strings.Contains(cond.Message, want) {
				return false, fmt.Sprintf("message %q lacks %q", cond.Message, want)
			}
		}
		// The spin ends on whichever budget runs out first: its
		// instructions, or, on a machine short of CPU, the call's deadline.
		// Either is named.
		if !strings.Contains(cond.Message, "instructions") && !strings.Contains(cond.Message, "deadline") {
			return false, fmt.Sprintf("message %q names neither the instruction budget nor the deadline", cond.Message)
		}
		return true, ""
	})
	testkit.Eventually(t, controllertest.Deadline, "a Warning Event on hostile-service", func() (bool, string) {
		var events eventsv1.EventList
		if err := hub.List(ctx, &events); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.Regarding.Name == "hostile-service" && e.Reason == configv1.ReasonBudgetExceeded && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Note, "v1 Service") && strings.Contains(e.Note, "replicaResource") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events, none BudgetExceeded on hostile-service", len(events.Items))
	})
	testkit.Eventually(t, controllertest.Deadline, "hostile-unused-0 Ready=False Refused", func() (bool, string) {
		cond := customizationReady(t, hub, "hostile-unused-0")
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != configv1.ReasonRefused ||
			!strings.Contains(cond.Message, `"hostile-unused-0"`) || !strings.Contains(cond.Message, "budget exhausted") {
			return false, fmt.Sprintf("condition %+v", cond)
		}
		return true, ""
	})
	for _, n := range f.Names {
		var got corev1.Service
		if err := f.Members[n].Get(ctx, client.ObjectKeyFromObject(svc), &got); err == nil {
			t.Errorf("Service svc reached %s although its kind's customization is refused", n)
		}
	}

	t.Log("the manager stops while a new hostile customization loads and the refused kind is retried")
	testkit.MustCreate(t, hub, hostileCustomization("hostile-late", "example.io/v1", "Late",
		api.CustomizationRules{ReplicaResource: &api.LuaScript{LuaScript: "while true do\nend\nfunction GetReplicas(obj) return 1, nil end"}}))
	orig := svc.DeepCopy()
	svc.Labels = map[string]string{"touched": "true"}
	if err := hub.Patch(ctx, svc, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stop()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the manager took %v to stop", took)
	} else {
		t.Logf("the manager stopped in %v", took.Round(time.Millisecond))
	}
}

// flowTimes are how long templates took to reach every member.
type flowTimes struct{ created, updated time.Duration }

// flowTemplates places ConfigMap cfg-<suffix> and Deployment web-<suffix>
// on every member, waits for them, changes the Deployment's image and
// waits for that, each within flowBound.
func flowTemplates(t *testing.T, f controllertest.Fleet, suffix string) flowTimes {
	t.Helper()
	hub := f.Hub
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cfg-" + suffix}, Data: map[string]string{"k": "v"}}
	d := controllertest.Deployment(2)
	d.Name = "web-" + suffix
	controllertest.CreatePolicy(t, hub, apitest.MakePropagationPolicy("flow-"+suffix, "default").
		SelectName("v1", "ConfigMap", cm.Name).SelectName("apps/v1", "Deployment", d.Name).ClusterNames(f.Names...))
	var out flowTimes
	start := time.Now()
	testkit.MustCreate(t, hub, cm)
	testkit.MustCreate(t, hub, d)
	waitImage(t, f, cm.Name, d.Name, "nginx")
	out.created = time.Since(start)

	if err := hub.Get(t.Context(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	orig := d.DeepCopy()
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	start = time.Now()
	if err := hub.Patch(t.Context(), d, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	waitImage(t, f, cm.Name, d.Name, "nginx:1.27")
	out.updated = time.Since(start)
	return out
}

// waitImage waits, within flowBound, for the ConfigMap and the Deployment
// with the image in every member.
func waitImage(t *testing.T, f controllertest.Fleet, cm, deploy, image string) {
	t.Helper()
	testkit.Eventually(t, flowBound, fmt.Sprintf("ConfigMap %s and Deployment %s (%s) in every member", cm, deploy, image), func() (bool, string) {
		for _, n := range f.Names {
			c := f.Members[n]
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: cm}, &corev1.ConfigMap{}); err != nil {
				return false, fmt.Sprintf("%s: %v", n, err)
			}
			var d appsv1.Deployment
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: deploy}, &d); err != nil {
				return false, fmt.Sprintf("%s: %v", n, err)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
				return false, fmt.Sprintf("%s: image %s", n, got)
			}
		}
		return true, ""
	})
}

// hostileCustomization is a customization of apiVersion/kind.
func hostileCustomization(name, apiVersion, kind string, rules api.CustomizationRules) *configv1.ResourceInterpreterCustomization {
	return &configv1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target:         api.CustomizationTarget{APIVersion: apiVersion, Kind: kind},
			Customizations: rules,
		},
	}
}

// customizationReady is the customization's Ready condition, nil without.
func customizationReady(t *testing.T, hub client.Client, name string) *metav1.Condition {
	t.Helper()
	var ric configv1.ResourceInterpreterCustomization
	if err := hub.Get(t.Context(), client.ObjectKey{Name: name}, &ric); err != nil {
		t.Fatal(err)
	}
	return apimeta.FindStatusCondition(ric.Status.Conditions, configv1.ConditionReady)
}
