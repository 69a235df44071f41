package namespacesync_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestNamespaceSync runs Karmada's namespace sync on a real host and three
// real members: a host namespace reaches the members with its labels and
// annotations and the ClusterOverridePolicy that selects it, follows a
// label change, reaches a member registered later, and leaves alone a
// member that had the namespace before (labels untouched, never deleted).
// A namespace labelled namespace.karmada.io/skip-auto-propagation and a
// reserved one are never synced, and a Work forged for kube-system is
// refused. Deleting the host namespace removes it only where flotilla
// created it.
func TestNamespaceSync(t *testing.T) {
	env := controllertest.StartFleet(t, 3)
	hub, names, ctx := env.Hub, env.Names, t.Context()
	pre, withOverride, late := names[0], names[1], names[2]

	t.Log("setup: member 0 already has namespace team-a; member 2 registers later")
	testkit.MustCreate(t, env.Members[pre], &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"owner": "someone-else"}}})
	var lateCluster clusterv1.Cluster
	if err := hub.Get(ctx, client.ObjectKey{Name: late}, &lateCluster); err != nil {
		t.Fatal(err)
	}
	if err := hub.Delete(ctx, &lateCluster); err != nil {
		t.Fatal(err)
	}
	cop := &policyv1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "team-a-region"}}
	testkit.MustYAML(t, cop, `
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: team-a}]
  overrideRules:
  - targetCluster: {clusterNames: [%s]}
    overriders:
      labelsOverrider: [{operator: add, value: {region: west}}]
`, withOverride)
	testkit.MustCreate(t, hub, cop)
	env.StartControlPlane(t)

	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"contact": "team-a@example.com"}}})
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Labels: map[string]string{shared.LabelSkipAutoPropagation: "True"}}})
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-extra"}})

	waitNamespace(t, env, withOverride, "team-a", map[string]string{"team": "a", "region": "west", render.LabelFleet: "test"}, map[string]string{"contact": "team-a@example.com"})

	t.Log("the pre-existing namespace is refused, not taken over")
	workName := shared.WorkName(api.TemplateRef{Version: "v1", Kind: "Namespace", Name: "team-a"})
	testkit.Eventually(t, controllertest.Deadline, "work of the pre-existing namespace refused", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, client.ObjectKey{Namespace: shared.ExecutionNamespace(pre), Name: workName}, &w); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "existed before flotilla's namespace sync"), fmt.Sprintf("conditions %+v", w.Status.Conditions)
	})
	assertUntouched(t, env.Members[pre])

	t.Log("a label change on the host reaches the members")
	var ns corev1.Namespace
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: "team-a"}, &ns, func() {
		ns.Labels["team"] = "b"
	})
	waitNamespace(t, env, withOverride, "team-a", map[string]string{"team": "b", "region": "west"}, nil)

	t.Log("a member registered later gets the namespace, without the other cluster's override")
	lateCluster = clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: late}, Spec: lateCluster.Spec}
	testkit.MustCreate(t, hub, &lateCluster)
	waitNamespace(t, env, late, "team-a", map[string]string{"team": "b"}, map[string]string{"contact": "team-a@example.com"})
	if err := env.Members[late].Get(ctx, client.ObjectKey{Name: "team-a"}, &ns); err != nil || ns.Labels["region"] != "" {
		t.Fatalf("late member's team-a: %v, labels %v; want no region label (the override targets %s only)", err, ns.Labels, withOverride)
	}

	t.Log("a skipped and a reserved namespace reach no member; a Work forged for kube-system is refused")
	forged := forgedNamespaceWork(t, withOverride)
	testkit.MustCreate(t, hub, forged)
	testkit.Eventually(t, controllertest.Deadline, "forged work refused", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, client.ObjectKeyFromObject(forged), &w); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		return c != nil && c.Reason == "Refused" && strings.Contains(c.Message, "never synced"), fmt.Sprintf("conditions %+v", w.Status.Conditions)
	})
	for _, n := range []string{withOverride, late} {
		for _, name := range []string{"quiet", "kube-extra"} {
			if err := env.Members[n].Get(ctx, client.ObjectKey{Name: name}, &ns); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s in member %s: %v, want it never synced", name, n, err)
			}
		}
		if err := env.Members[n].Get(ctx, client.ObjectKey{Name: "kube-system"}, &ns); err != nil || ns.Labels["evil"] != "" {
			t.Errorf("member %s kube-system: %v labels %v, want the forged label absent", n, err, ns.Labels)
		}
	}
	var skipped workv1.WorkList
	if err := hub.List(ctx, &skipped, client.MatchingLabels{shared.LabelNamespaceSyncName: "quiet"}); err != nil || len(skipped.Items) != 0 {
		t.Errorf("works of the skipped namespace: %v %d, want none", err, len(skipped.Items))
	}

	t.Log("deleting the host namespace removes it where flotilla created it, and only there")
	if err := hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{withOverride, late} {
		testkit.Eventually(t, controllertest.Deadline, "team-a removed from "+n, func() (bool, string) {
			// The members run no namespace controller, so a deleted
			// namespace stays Terminating.
			err := env.Members[n].Get(ctx, client.ObjectKey{Name: "team-a"}, &ns)
			return apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero()), fmt.Sprintf("get: %v", err)
		})
	}
	testkit.Eventually(t, controllertest.Deadline, "works of team-a gone", func() (bool, string) {
		var list workv1.WorkList
		if err := hub.List(ctx, &list, client.MatchingLabels{shared.LabelNamespaceSyncName: "team-a"}); err != nil {
			return false, err.Error()
		}
		return len(list.Items) == 0, fmt.Sprintf("%d works left", len(list.Items))
	})
	assertUntouched(t, env.Members[pre])
}

// waitNamespace waits until member has namespace name with at least the
// given labels and annotations.
func waitNamespace(t *testing.T, env controllertest.Fleet, member, name string, labels, annotations map[string]string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("namespace %s in %s with labels %v", name, member, labels), func() (bool, string) {
		var ns corev1.Namespace
		if err := env.Members[member].Get(t.Context(), client.ObjectKey{Name: name}, &ns); err != nil {
			return false, err.Error()
		}
		for k, v := range labels {
			if ns.Labels[k] != v {
				return false, fmt.Sprintf("labels %v annotations %v", ns.Labels, ns.Annotations)
			}
		}
		for k, v := range annotations {
			if ns.Annotations[k] != v {
				return false, fmt.Sprintf("labels %v annotations %v", ns.Labels, ns.Annotations)
			}
		}
		return true, ""
	})
}

// assertUntouched checks the member's own team-a: not deleted, its labels
// as it made them, no flotilla ownership.
func assertUntouched(t *testing.T, member client.Client) {
	t.Helper()
	var ns corev1.Namespace
	if err := member.Get(t.Context(), client.ObjectKey{Name: "team-a"}, &ns); err != nil {
		t.Fatalf("pre-existing namespace: %v", err)
	}
	if !ns.DeletionTimestamp.IsZero() || ns.Labels["owner"] != "someone-else" || ns.Labels["team"] != "" || ns.Labels[render.LabelFleet] != "" {
		t.Fatalf("pre-existing namespace: deleting %v, labels %v; want it untouched", !ns.DeletionTimestamp.IsZero(), ns.Labels)
	}
}

// forgedNamespaceWork is a Work of the namespace sync's shape that would
// label the member's kube-system.
func forgedNamespaceWork(t *testing.T, cluster string) *workv1.Work {
	t.Helper()
	manifest := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system","labels":{"evil":"yes"}}}`)
	return &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: shared.ExecutionNamespace(cluster),
			Name:      shared.WorkName(api.TemplateRef{Version: "v1", Kind: "Namespace", Name: "kube-system"}),
			Labels:    map[string]string{shared.LabelNamespaceSyncName: "kube-system", shared.LabelNamespaceSyncID: "forged"},
		},
		Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}}},
	}
}
