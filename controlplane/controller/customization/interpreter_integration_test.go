package customization_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

var rolloutGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}

// rolloutCRD is a stand-in for Argo's Rollout CRD: namespaced, any
// fields, with a status subresource as Argo's has.
func rolloutCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	testkit.MustYAML(t, crd, apitest.RolloutCRDYAML)
	return crd
}

// exampleCustomization reads flotilla's Argo Rollout customization from
// examples/interpreter, as the config.flotilla.io object a user applies.
func exampleCustomization(t *testing.T) *configv1.ResourceInterpreterCustomization {
	t.Helper()
	ric := apitest.ReadInterpreters(t, "../../../examples/interpreter/argo-rollout.yaml")[0]
	return &configv1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: ric.Name}, Spec: ric.Spec}
}

// setUpRolloutCRDs installs the Rollout CRD in the host and the first two
// members.
func setUpRolloutCRDs(t *testing.T, env controllertest.Fleet) {
	t.Helper()
	testkit.MustCreate(t, env.Hub, rolloutCRD(t))
	for _, n := range env.Names[:2] {
		testkit.MustCreate(t, env.Members[n], rolloutCRD(t))
	}
}

// createRolloutPolicy creates the PropagationPolicy that claims the
// Rollout, with the given spec fields after its resource selector.
func createRolloutPolicy(t *testing.T, hub client.Client, rest string, args ...any) {
	t.Helper()
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "checkout"}}
	testkit.MustYAML(t, pp, "spec:\n  resourceSelectors:\n  - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: checkout}\n"+rest, args...)
	testkit.MustCreate(t, hub, pp)
}

// createRollout creates the Rollout in the host once it serves the kind.
func createRollout(t *testing.T, hub client.Client, replicas int64) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "host serves rollouts", func() (bool, string) {
		err := hub.Create(t.Context(), rollout(replicas))
		return err == nil, fmt.Sprint(err)
	})
}

// waitRollout waits for the Rollout in a member.
func waitRollout(t *testing.T, c client.Client, cluster string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "the Rollout in "+cluster, func() (bool, string) {
		_, err := getRollout(t, c)
		return err == nil, fmt.Sprint(err)
	})
}

func getRollout(t *testing.T, c client.Client) (*unstructured.Unstructured, error) {
	u := rollout(0)
	return u, c.Get(t.Context(), client.ObjectKeyFromObject(u), u)
}

// setRolloutStatus plays Argo's controller in a member: every replica
// updated and available, in the given phase, at the current generation.
func setRolloutStatus(t *testing.T, c client.Client, phase string, replicas int64) {
	t.Helper()
	u, err := getRollout(t, c)
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{
		"observedGeneration": fmt.Sprint(u.GetGeneration()), "phase": phase,
		"replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
	}
	if err := c.Status().Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
}

func rollout(replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"replicas": replicas,
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
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	setUpRolloutCRDs(t, env)
	createRolloutPolicy(t, hub, `
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
	createRollout(t, hub, 6)
	memberRollout := func(n string) (*unstructured.Unstructured, error) { return getRollout(t, members[n]) }
	replicasAre := func(want map[string]int64) func() (bool, string) {
		return func() (bool, string) {
			got := map[string]int64{}
			for _, n := range names[:2] {
				u, err := memberRollout(n)
				if err != nil {
					return false, err.Error()
				}
				got[n], _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
			}
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
		}
	}
	t.Log("without a customization a Rollout is not divided: each member gets all 6 replicas")
	testkit.Eventually(t, controllertest.Deadline, "member rollouts with 6 replicas each", replicasAre(map[string]int64{names[0]: 6, names[1]: 6}))

	t.Log("the customization, created afterwards, divides 6 replicas 4:2 (GetReplicas, ReviseReplica)")
	ric := exampleCustomization(t)
	testkit.MustCreate(t, hub, ric)
	want := map[string]int64{names[0]: 4, names[1]: 2}
	testkit.Eventually(t, controllertest.Deadline, "member rollouts with 4 and 2 replicas", replicasAre(want))

	t.Log("members report their Rollouts rolled out; the template's status sums them")
	setRolloutStatus := func(n, phase string) { t.Helper(); setRolloutStatus(t, members[n], phase, want[n]) }
	for _, n := range names[:2] {
		setRolloutStatus(n, "Healthy")
	}
	templateStatus := func() (map[string]any, error) {
		u := rollout(0)
		err := hub.Get(ctx, client.ObjectKeyFromObject(u), u)
		s, _, _ := unstructured.NestedMap(u.Object, "status")
		return s, err
	}
	testkit.Eventually(t, controllertest.Deadline, "template status 6 available, Healthy", func() (bool, string) {
		s, err := templateStatus()
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(s["availableReplicas"]) == "6" && s["phase"] == "Healthy", fmt.Sprint(s)
	})
	bindingHealth := func() (map[string]api.ResourceHealth, *metav1.Condition, error) {
		var rb workv1.ResourceBinding
		err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(rolloutGVK.GroupKind(), "checkout")}, &rb)
		out := map[string]api.ResourceHealth{}
		for _, it := range rb.Status.AggregatedStatus {
			out[it.ClusterName] = it.Health
		}
		return out, apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionFullyApplied), err
	}
	testkit.Eventually(t, controllertest.Deadline, "binding: both members Healthy by the customization", func() (bool, string) {
		h, _, err := bindingHealth()
		return err == nil && h[names[0]] == api.ResourceHealthy && h[names[1]] == api.ResourceHealthy, fmt.Sprint(h, err)
	})

	t.Log("a degraded member is Unhealthy by the customization and the template's phase says so")
	setRolloutStatus(names[1], "Degraded")
	testkit.Eventually(t, controllertest.Deadline, "binding: "+names[1]+" Unhealthy, template Degraded", func() (bool, string) {
		h, _, err := bindingHealth()
		s, _ := templateStatus()
		return err == nil && h[names[1]] == api.ResourceUnhealthy && h[names[0]] == api.ResourceHealthy && s["phase"] == "Degraded", fmt.Sprint(h, s, err)
	})

	t.Log("a replicaRevision script that never ends: an error naming it, nothing applied")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(ric), ric, func() {
		ric.Spec.Customizations.ReplicaRevision = &api.LuaScript{LuaScript: "function ReviseReplica(obj, n)\n  while true do\n  end\nend\n"}
	})
	u, err := getRollout(t, hub)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(u), u, func() { _ = unstructured.SetNestedField(u.Object, int64(9), "spec", "replicas") })
	testkit.Eventually(t, controllertest.Deadline, "binding FullyApplied False naming the customization", func() (bool, string) {
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

// TestRolloutFailoverByCustomizedHealth: the health the customization
// judges drives application failover. A Rollout on the primary that its
// member reports Degraded is Unhealthy by the customization; after the
// policy's toleration it is evicted and moves to the backup.
func TestRolloutFailoverByCustomizedHealth(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	primary, backup := names[0], names[1]
	setUpRolloutCRDs(t, env)
	testkit.MustCreate(t, hub, exampleCustomization(t))
	createRolloutPolicy(t, hub, `
  placement:
    clusterAffinities:
    - {affinityName: primary, clusterNames: [%s]}
    - {affinityName: backup, clusterNames: [%s]}
  # Karmada refuses application failover without propagateDeps, and so do
  # the controllers: an invalid policy claims nothing.
  propagateDeps: true
  failover:
    application:
      decisionConditions: {tolerationSeconds: 2}
      purgeMode: Immediately
`, primary, backup)
	createRollout(t, hub, 3)
	waitRollout(t, members[primary], primary)
	setRolloutStatus(t, members[primary], "Healthy", 3)
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(rolloutGVK.GroupKind(), "checkout")}
	testkit.Eventually(t, controllertest.Deadline, "the primary Healthy by the customization", func() (bool, string) {
		var rb workv1.ResourceBinding
		err := hub.Get(ctx, rbKey, &rb)
		return err == nil && controllertest.HealthOf(&rb, primary) == api.ResourceHealthy, fmt.Sprint(rb.Status.AggregatedStatus, err)
	})

	t.Log("the primary's Rollout turns Degraded: Unhealthy by the customization, evicted after 2s, placed on the backup")
	setRolloutStatus(t, members[primary], "Degraded", 3)
	waitRollout(t, members[backup], backup)
	testkit.Eventually(t, controllertest.Deadline, "the binding placed on the backup only", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.Clusters) == 1 && rb.Spec.Clusters[0].Name == backup, fmt.Sprintf("clusters %v", rb.Spec.Clusters)
	})
}

// TestRolloutRetention: a propagated HPA that scales a Rollout marks it
// with the retain-replicas label, as for a Deployment, because the
// customization scripts its retention; the retention script then keeps the
// replicas the member's HPA sets through several resyncs, while a template
// change still rolls out.
func TestRolloutRetention(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	setUpRolloutCRDs(t, env)
	testkit.MustCreate(t, hub, exampleCustomization(t))
	createRolloutPolicy(t, hub, `
  - {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: checkout}
  placement:
    clusterAffinity: {clusterNames: [%s]}
`, names[0])
	testkit.MustCreate(t, hub, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "checkout"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "checkout"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
		},
	})
	r := rollout(3)
	createRollout(t, hub, 3)
	member := members[names[0]]
	field := func(path ...string) func() (string, error) {
		return func() (string, error) {
			u, err := getRollout(t, member)
			v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
			return fmt.Sprint(v), err
		}
	}
	replicas, image := field("spec", "replicas"), field("spec", "template", "spec", "containers")
	testkit.Eventually(t, controllertest.Deadline, "the Rollout created with 3 replicas and the retain-replicas label", func() (bool, string) {
		v, err := replicas()
		u, _ := getRollout(t, member)
		return err == nil && v == "3" && u.GetLabels()[interpret.RetainReplicasLabel] == "true", fmt.Sprint(v, u.GetLabels(), err)
	})

	t.Log("the member's HPA scales the Rollout to 7: it stays through several resyncs")
	u, err := getRollout(t, member)
	if err != nil {
		t.Fatal(err)
	}
	testkit.MustUpdate(t, member, client.ObjectKeyFromObject(u), u, func() { _ = unstructured.SetNestedField(u.Object, int64(7), "spec", "replicas") }, client.FieldOwner("hpa"))
	time.Sleep(4 * time.Second) // four resyncs (Resync is 1s)
	if v, err := replicas(); err != nil || v != "7" {
		t.Fatalf("replicas after resyncs = %s, %v; want the member's 7", v, err)
	}

	t.Log("an image change rolls out and leaves the replicas alone")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(r), r, func() {
		_ = unstructured.SetNestedSlice(r.Object, []any{map[string]any{"name": "checkout", "image": "checkout:2"}}, "spec", "template", "spec", "containers")
	})
	testkit.Eventually(t, controllertest.Deadline, "image checkout:2 with 7 replicas", func() (bool, string) {
		img, err := image()
		n, _ := replicas()
		return err == nil && strings.Contains(img, "checkout:2") && n == "7", img + " " + n
	})
}
