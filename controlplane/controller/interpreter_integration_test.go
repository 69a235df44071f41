package controller_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
)

var rolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// rolloutCRD is a stand-in for Argo's Rollout CRD: namespaced, any
// fields, with a status subresource as Argo's has.
func rolloutCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	mustYAML(t, crd, `
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  scope: Namespaced
  names: {plural: rollouts, singular: rollout, kind: Rollout, listKind: RolloutList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`)
	return crd
}

// exampleCustomization reads flotilla's Argo Rollout customization from
// examples/interpreter, as the config.flotilla.io object a user applies.
func exampleCustomization(t *testing.T) *configv1.ResourceInterpreterCustomization {
	t.Helper()
	path := "../../examples/interpreter/argo-rollout.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Decode(path, data)
	if err != nil || len(b.Interpreters) != 1 {
		t.Fatalf("decode %s: %v, %d customizations", path, err, len(b.Interpreters))
	}
	return &configv1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: b.Interpreters[0].Name}, Spec: b.Interpreters[0].Spec}
}

func rollout() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"replicas": int64(6),
		"selector": map[string]any{"matchLabels": map[string]any{"app": "checkout"}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "checkout"}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "checkout", "image": "checkout:1"}}},
		},
	}}}
	u.SetGroupVersionKind(rolloutGVK)
	u.SetNamespace("default")
	u.SetName("checkout")
	return u
}

// TestRolloutCustomization runs flotilla's Argo Rollout customization in
// continuous mode against a real host and real members: the Rollout's
// replicas are divided 2:1 by static weights, the members' statuses come
// back summed into the template's, the customization's health judges each
// member in the binding's aggregated status, and a customization that runs
// out of budget stops the rendering with an error naming it while the
// members keep what they had.
func TestRolloutCustomization(t *testing.T) {
	env := startControlPlane(t)
	hub, members, names := env.hub, env.members, env.names
	ctx := t.Context()

	mustCreate(t, hub, rolloutCRD(t))
	for _, n := range names[:2] {
		mustCreate(t, members[n], rolloutCRD(t))
	}
	ric := exampleCustomization(t)
	mustCreate(t, hub, ric)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "checkout"}}
	mustYAML(t, pp, `
spec:
  resourceSelectors:
  - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: checkout}
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%s]}, weight: 2}
        - {targetCluster: {clusterNames: [%s]}, weight: 1}
`, names[0], names[1], names[0], names[1])
	mustCreate(t, hub, pp)
	poll(t, "host serves rollouts", func() (bool, string) {
		err := hub.Create(ctx, rollout())
		return err == nil, fmt.Sprint(err)
	})

	t.Log("the customization's GetReplicas and ReviseReplica divide 6 replicas 4:2")
	want := map[string]int64{names[0]: 4, names[1]: 2}
	memberRollout := func(n string) (*unstructured.Unstructured, error) {
		u := rollout()
		return u, members[n].Get(ctx, client.ObjectKeyFromObject(u), u)
	}
	poll(t, "member rollouts with 4 and 2 replicas", func() (bool, string) {
		got := map[string]int64{}
		for _, n := range names[:2] {
			u, err := memberRollout(n)
			if err != nil {
				return false, err.Error()
			}
			got[n], _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})

	t.Log("members report their Rollouts rolled out; the template's status sums them")
	setRolloutStatus := func(n, phase string) {
		t.Helper()
		u, err := memberRollout(n)
		if err != nil {
			t.Fatal(err)
		}
		r := want[n]
		u.Object["status"] = map[string]any{
			"observedGeneration": fmt.Sprint(u.GetGeneration()), "phase": phase,
			"replicas": r, "updatedReplicas": r, "readyReplicas": r, "availableReplicas": r,
		}
		if err := members[n].Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names[:2] {
		setRolloutStatus(n, "Healthy")
	}
	templateStatus := func() (map[string]any, error) {
		u := rollout()
		err := hub.Get(ctx, client.ObjectKeyFromObject(u), u)
		s, _, _ := unstructured.NestedMap(u.Object, "status")
		return s, err
	}
	poll(t, "template status 6 available, Healthy", func() (bool, string) {
		s, err := templateStatus()
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(s["availableReplicas"]) == "6" && s["phase"] == "Healthy", fmt.Sprint(s)
	})
	bindingHealth := func() (map[string]api.ResourceHealth, *metav1.Condition, error) {
		var rb workv1.ResourceBinding
		err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: controller.BindingName(rolloutGVK.GroupKind(), "checkout")}, &rb)
		out := map[string]api.ResourceHealth{}
		for _, it := range rb.Status.AggregatedStatus {
			out[it.ClusterName] = it.Health
		}
		return out, meta.FindStatusCondition(rb.Status.Conditions, controller.ConditionFullyApplied), err
	}
	poll(t, "binding: both members Healthy by the customization", func() (bool, string) {
		h, _, err := bindingHealth()
		return err == nil && h[names[0]] == api.ResourceHealthy && h[names[1]] == api.ResourceHealthy, fmt.Sprint(h, err)
	})

	t.Log("a degraded member is Unhealthy by the customization and the template's phase says so")
	setRolloutStatus(names[1], "Degraded")
	poll(t, "binding: "+names[1]+" Unhealthy, template Degraded", func() (bool, string) {
		h, _, err := bindingHealth()
		s, _ := templateStatus()
		return err == nil && h[names[1]] == api.ResourceUnhealthy && h[names[0]] == api.ResourceHealthy && s["phase"] == "Degraded", fmt.Sprint(h, s, err)
	})

	t.Log("a replicaRevision script that never ends: an error naming it, nothing applied")
	if err := hub.Get(ctx, client.ObjectKeyFromObject(ric), ric); err != nil {
		t.Fatal(err)
	}
	ric.Spec.Customizations.ReplicaRevision = &api.LuaScript{LuaScript: "function ReviseReplica(obj, n)\n  while true do\n  end\nend\n"}
	if err := hub.Update(ctx, ric); err != nil {
		t.Fatal(err)
	}
	u := rollout()
	if err := hub.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas")
	if err := hub.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	poll(t, "binding FullyApplied False naming the customization", func() (bool, string) {
		_, c, err := bindingHealth()
		if err != nil || c == nil {
			return false, fmt.Sprint(c, err)
		}
		ok := c.Status == metav1.ConditionFalse && strings.Contains(c.Message, `"flotilla-argo-rollout"`) &&
			strings.Contains(c.Message, "replicaRevision:3:") && strings.Contains(c.Message, "budget exhausted")
		return ok, c.Message
	})
	for _, n := range names[:2] {
		got, err := memberRollout(n)
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != want[n] {
			t.Errorf("%s: replicas %d after the broken script, want %d (nothing applied)", n, r, want[n])
		}
	}
}
