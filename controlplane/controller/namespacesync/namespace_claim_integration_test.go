package namespacesync_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestNamespaceClaimedByPolicy runs the namespace sync and a
// ClusterPropagationPolicy that claims the same Namespace on a real host
// and three real members. The policy's binding takes the namespace's Work
// over in the clusters it places it on (applied, not refused as a Work of
// both), the sync keeps the others; a cluster the policy leaves, and then
// every cluster once the policy is deleted, goes back to the sync. Each
// Work changes hands in place, and each member namespace keeps its UID and
// is never deleted throughout.
func TestNamespaceClaimedByPolicy(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names, ctx := env.Hub, env.Names, t.Context()
	workName := shared.WorkName(api.TemplateRef{Version: "v1", Kind: "Namespace", Name: "team-a"})
	workOf := func(cluster string) client.ObjectKey {
		return client.ObjectKey{Namespace: shared.ExecutionNamespace(cluster), Name: workName}
	}

	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"team": "a"}}})
	memberUIDs := map[string]types.UID{}
	workUIDs := map[string]types.UID{}
	for _, n := range names {
		waitNamespace(t, env, n, "team-a", map[string]string{"team": "a"}, nil)
		var ns corev1.Namespace
		if err := env.Members[n].Get(ctx, client.ObjectKey{Name: "team-a"}, &ns); err != nil {
			t.Fatal(err)
		}
		memberUIDs[n] = ns.UID
		workUIDs[n] = waitWorkOwner(t, hub, workOf(n), "the namespace sync", "")
	}
	// intact checks every member's team-a: the same object all along.
	intact := func(step string) {
		t.Helper()
		for _, n := range names {
			var ns corev1.Namespace
			if err := env.Members[n].Get(ctx, client.ObjectKey{Name: "team-a"}, &ns); err != nil {
				t.Fatalf("%s: team-a in %s: %v", step, n, err)
			}
			if ns.UID != memberUIDs[n] || !ns.DeletionTimestamp.IsZero() {
				t.Fatalf("%s: team-a in %s has UID %s (was %s), deleting %v: the member namespace was deleted", step, n, ns.UID, memberUIDs[n], !ns.DeletionTimestamp.IsZero())
			}
		}
	}

	t.Log("claim: a ClusterPropagationPolicy places team-a on the first two members")
	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors: [{apiVersion: v1, kind: Namespace, name: team-a}]
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
`, names[0], names[1])
	testkit.MustCreate(t, hub, cpp)
	const bindingName = "team-a-namespace"
	for _, n := range names[:2] {
		if uid := waitWorkOwner(t, hub, workOf(n), "the policy's binding", bindingName); uid != workUIDs[n] {
			t.Errorf("the Work of team-a in %s was replaced (UID %s, was %s), want it taken over in place", n, uid, workUIDs[n])
		}
	}
	testkit.Eventually(t, controllertest.Deadline, "ClusterResourceBinding "+bindingName+" fully applied", func() (bool, string) {
		var crb workv1.ClusterResourceBinding
		if err := hub.Get(ctx, client.ObjectKey{Name: bindingName}, &crb); err != nil {
			return false, err.Error()
		}
		return apimeta.IsStatusConditionTrue(crb.Status.Conditions, api.ConditionFullyApplied), fmt.Sprintf("status %+v", crb.Status)
	})
	t.Log("the third member's Work stays the sync's, and no owner flaps (ten resyncs)")
	waitWorkOwner(t, hub, workOf(names[2]), "the namespace sync", "")
	for range 50 {
		for i, n := range names {
			var w workv1.Work
			if err := hub.Get(ctx, workOf(n), &w); err != nil {
				t.Fatal(err)
			}
			_, synced := w.Labels[shared.LabelNamespaceSyncName]
			if claimed := i < 2; synced == claimed || (w.Annotations[shared.AnnotationBindingName] == bindingName) != claimed || w.UID != workUIDs[n] {
				t.Fatalf("work of team-a in %s changed hands: UID %s (was %s), labels %v, annotations %v", n, w.UID, workUIDs[n], w.Labels, w.Annotations)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	intact("claimed")

	t.Log("the policy leaves the first member: its Work goes back to the sync")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(cpp), cpp, func() {
		cpp.Spec.Placement.ClusterAffinity.ClusterNames = names[1:2]
	})
	if uid := waitWorkOwner(t, hub, workOf(names[0]), "the namespace sync", ""); uid != workUIDs[names[0]] {
		t.Errorf("the Work of team-a in %s was replaced (UID %s, was %s), want it handed back in place", names[0], uid, workUIDs[names[0]])
	}
	waitWorkOwner(t, hub, workOf(names[1]), "the policy's binding", bindingName)
	intact("first member released")

	t.Log("the policy goes: every Work is the sync's again, and a label change on the host still reaches all members")
	if err := hub.Delete(ctx, cpp); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if uid := waitWorkOwner(t, hub, workOf(n), "the namespace sync", ""); uid != workUIDs[n] {
			t.Errorf("the Work of team-a in %s was replaced (UID %s, was %s), want it handed back in place", n, uid, workUIDs[n])
		}
	}
	controllertest.WaitGone(t, hub, &workv1.ClusterResourceBinding{}, bindingName)
	var ns corev1.Namespace
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: "team-a"}, &ns, func() {
		ns.Labels["team"] = "b"
	})
	for _, n := range names {
		waitNamespace(t, env, n, "team-a", map[string]string{"team": "b"}, nil)
	}
	intact("released")
}

// waitWorkOwner waits until the Work at key is applied and belongs to the
// namespace sync (binding "") or to the named ClusterResourceBinding, and
// to it alone, and returns the Work's UID.
func waitWorkOwner(t *testing.T, hub client.Client, key client.ObjectKey, owner, binding string) types.UID {
	t.Helper()
	var w workv1.Work
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("work %s applied for %s", key, owner), func() (bool, string) {
		if err := hub.Get(t.Context(), key, &w); err != nil {
			return false, err.Error()
		}
		_, synced := w.Labels[shared.LabelNamespaceSyncName]
		named := w.Annotations[shared.AnnotationBindingName]
		applied := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		ok := applied != nil && applied.Status == metav1.ConditionTrue && applied.ObservedGeneration == w.Generation &&
			synced == (binding == "") && named == binding && w.DeletionTimestamp.IsZero()
		return ok, fmt.Sprintf("labels %v, annotations %v, conditions %+v", w.Labels, w.Annotations, w.Status.Conditions)
	})
	return w.UID
}
