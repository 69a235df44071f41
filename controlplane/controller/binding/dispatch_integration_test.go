package binding_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestSuspendDispatching runs Karmada's dispatch suspension against a real
// host and real members: with dispatchingOnClusters naming the second of two
// members, both are scheduled and both get a Work, but only the first gets
// the Deployment; the held-back Work says Dispatching=False and so does the
// binding. With dispatching: true a template edit is written into every Work
// and reaches no member. Lifting the suspension dispatches everywhere and
// the binding's Dispatching condition goes.
func TestSuspendDispatching(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  placement:
    clusterAffinity:
      clusterNames: [%s, %s]
  suspension:
    dispatchingOnClusters:
      clusterNames: [%s]
`, names[0], names[1], names[1])
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	key := client.ObjectKey{Namespace: "default", Name: "web-deployment.apps"}

	t.Log("dispatchingOnClusters: the named member is scheduled and has a Work, but no Deployment")
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 2})
	waitWorkHeld(t, env, names[1], 2)
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[1]: -1, names[2]: -1})
	waitBindingDispatching(t, env, key, names[1])

	t.Log("dispatching: true: an edit is written into every Work and reaches no member")
	setSuspension(t, env, pp, &api.Suspension{Dispatching: ptr.To(true)})
	waitBindingDispatching(t, env, key, names[0]+", "+names[1])
	var d appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: "web"}, &d, func() {
		d.Spec.Replicas = ptr.To[int32](3)
	})
	waitWorkHeld(t, env, names[0], 3)
	waitWorkHeld(t, env, names[1], 3)
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 2, names[1]: -1, names[2]: -1})

	t.Log("lifted: every scheduled member gets the current template, the condition goes")
	setSuspension(t, env, pp, nil)
	controllertest.WaitReplicas(t, env.Members, map[string]int32{names[0]: 3, names[1]: 3, names[2]: -1})
	testkit.Eventually(t, controllertest.Deadline, "binding Dispatching condition removed", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, key, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionDispatching)
		return c == nil && rb.Spec.Suspension == nil, fmt.Sprintf("condition %+v, suspension %+v", c, rb.Spec.Suspension)
	})
}

// TestPolicyWaitsAndOtherScheduler: a policy naming another scheduler
// leaves its binding unscheduled with Scheduled=False/OtherScheduler and
// nothing on any member; a policy whose dependentOverrides names a missing
// OverridePolicy, or whose schedulePriority names a missing PriorityClass,
// writes no binding (a Warning event on the template says why) until they
// are created, and then propagates with the override applied and the
// priority resolved into spec.schedulePriority.
func TestPolicyWaitsAndOtherScheduler(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	ctx := t.Context()

	other := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}
	testkit.MustYAML(t, other, `
spec:
  schedulerName: my-scheduler
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: other}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, names[0])
	testkit.MustCreate(t, hub, other)
	waits := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "waits"}}
	testkit.MustYAML(t, waits, `
spec:
  dependentOverrides: [colour]
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: flotilla-high}
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: waits}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, names[0])
	testkit.MustCreate(t, hub, waits)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}, Data: map[string]string{"k": "v"}})
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "waits"}, Data: map[string]string{"colour": "none"}})

	t.Log("schedulerName: left unscheduled, with a condition naming the scheduler")
	otherKey := client.ObjectKey{Namespace: "default", Name: "other-configmap"}
	testkit.Eventually(t, controllertest.Deadline, "binding left to my-scheduler", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, otherKey, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
		ok := c != nil && c.Status == metav1.ConditionFalse && c.Reason == api.ReasonOtherScheduler &&
			strings.Contains(c.Message, `"my-scheduler"`) && len(rb.Spec.Clusters) == 0
		return ok, fmt.Sprintf("condition %+v, clusters %v", c, rb.Spec.Clusters)
	})

	t.Log("dependentOverrides: no binding, a Warning event names the missing OverridePolicy")
	waitsKey := client.ObjectKey{Namespace: "default", Name: "waits-configmap"}
	waitEvent(t, env, "waits", api.ReasonDependentOverridesMissing, "OverridePolicy colour")
	noBinding(t, env, waitsKey)
	op := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "colour"}}
	testkit.MustYAML(t, op, `
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: ConfigMap, name: waits}
  overrideRules:
  - overriders:
      plaintext:
      - {path: /data/colour, operator: replace, value: blue}
`)
	testkit.MustCreate(t, hub, op)

	t.Log("schedulePriority: still no binding while the PriorityClass is missing")
	waitEvent(t, env, "waits", api.ReasonPriorityClassNotFound, `"flotilla-high"`)
	noBinding(t, env, waitsKey)
	testkit.MustCreate(t, hub, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-high"}, Value: 1000})
	testkit.Eventually(t, controllertest.Deadline, "ConfigMap waits propagated with the override", func() (bool, string) {
		var cm corev1.ConfigMap
		err := env.Members[names[0]].Get(ctx, client.ObjectKey{Namespace: "default", Name: "waits"}, &cm)
		return err == nil && cm.Data["colour"] == "blue", fmt.Sprintf("%v %v", err, cm.Data)
	})
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, waitsKey, &rb); err != nil {
		t.Fatal(err)
	}
	if p := rb.Spec.SchedulePriority; p == nil || p.Priority != 1000 {
		t.Errorf("spec.schedulePriority = %+v, want the PriorityClass value 1000", p)
	}
	for _, n := range names {
		var cm corev1.ConfigMap
		if err := env.Members[n].Get(ctx, client.ObjectKey{Namespace: "default", Name: "other"}, &cm); !apierrors.IsNotFound(err) {
			t.Errorf("member %s: ConfigMap other left to another scheduler: %v", n, err)
		}
	}
}

// setSuspension writes the policy's suspension.
func setSuspension(t *testing.T, env controllertest.Fleet, pp *policyv1.PropagationPolicy, s *api.Suspension) {
	t.Helper()
	testkit.MustUpdate(t, env.Hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Suspension = s
	})
}

// waitWorkHeld waits until the cluster's Work of Deployment web holds the
// given replicas, is held back, and the execution controller has said so
// for this very generation (so it has seen it and applied nothing).
func waitWorkHeld(t *testing.T, env controllertest.Fleet, cluster string, replicas int32) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("work of %s held back with %d replicas", cluster, replicas), func() (bool, string) {
		var list workv1.WorkList
		if err := env.Hub.List(t.Context(), &list, client.InNamespace(shared.ExecutionNamespace(cluster))); err != nil {
			return false, err.Error()
		}
		for _, w := range list.Items {
			var d appsv1.Deployment
			if len(w.Spec.Workload.Manifests) != 1 || json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &d) != nil || d.Name != "web" {
				continue
			}
			c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionDispatching)
			held := w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
			ok := held && d.Spec.Replicas != nil && *d.Spec.Replicas == replicas && c != nil && c.Status == metav1.ConditionFalse &&
				c.Reason == api.ReasonSuspendDispatching && c.ObservedGeneration == w.Generation
			return ok, fmt.Sprintf("suspended %v, replicas %v, condition %+v (generation %d)", w.Spec.SuspendDispatching, d.Spec.Replicas, c, w.Generation)
		}
		return false, "no work"
	})
}

// waitBindingDispatching waits for the binding's Dispatching=False
// condition naming exactly the held-back clusters.
func waitBindingDispatching(t *testing.T, env controllertest.Fleet, key client.ObjectKey, held string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "binding Dispatching=False for "+held, func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := env.Hub.Get(t.Context(), key, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionDispatching)
		ok := c != nil && c.Status == metav1.ConditionFalse && c.Reason == api.ReasonSuspendDispatching &&
			strings.Contains(c.Message, "cluster "+held+":")
		return ok, fmt.Sprintf("condition %+v", c)
	})
}

// waitEvent waits for a Warning event on ConfigMap name with the reason and
// a note containing want.
func waitEvent(t *testing.T, env controllertest.Fleet, name, reason, want string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "event "+reason+" on "+name, func() (bool, string) {
		var list eventsv1.EventList
		if err := env.Hub.List(t.Context(), &list, client.InNamespace("default")); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, want) {
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Note)
		}
		return false, fmt.Sprintf("events %q", seen)
	})
}

// noBinding checks that no binding exists for the key.
func noBinding(t *testing.T, env controllertest.Fleet, key client.ObjectKey) {
	t.Helper()
	var rb workv1.ResourceBinding
	if err := env.Hub.Get(t.Context(), key, &rb); !apierrors.IsNotFound(err) {
		t.Fatalf("binding %s: %v, want none while the policy waits", key, err)
	}
}
