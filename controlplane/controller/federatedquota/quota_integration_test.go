package federatedquota_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const deadline = 30 * time.Second

// TestStaticAssignments runs the quota controller on a real host and two
// real members: each static assignment becomes a ResourceQuota in its
// member through a Work, the member's quota status comes back into the
// FederatedResourceQuota's aggregatedStatus, a Work edited in its
// execution namespace to raise a limit is never applied, a removed
// assignment is pruned from its member, and deleting the quota removes
// the rest.
func TestStaticAssignments(t *testing.T) {
	start := time.Now()
	f := controllertest.StartFleet(t, 2)
	hub, ctx := f.Hub, t.Context()
	east, west := f.Names[0], f.Names[1]
	f.StartControlPlane(t)

	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	frq := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}}
	testkit.MustYAML(t, frq, `
spec:
  overall: {cpu: "4", memory: 8Gi}
  staticAssignments:
  - {clusterName: %s, hard: {cpu: "1", memory: 2Gi}}
  - {clusterName: %s, hard: {cpu: "3"}}
`, east, west)
	testkit.MustCreate(t, hub, frq)

	waitHard(t, f.Members[east], "cpu", "1")
	waitHard(t, f.Members[west], "cpu", "3")

	t.Log("the member's quota status comes back (written as the member's quota controller would)")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var rq corev1.ResourceQuota
		if err := f.Members[east].Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &rq); err != nil {
			return err
		}
		rq.Status = corev1.ResourceQuotaStatus{Hard: rq.Spec.Hard, Used: corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi")}}
		return f.Members[east].Status().Update(ctx, &rq)
	}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, deadline, "aggregatedStatus of "+east, func() (bool, string) {
		var got policyv1.FederatedResourceQuota
		if err := hub.Get(ctx, client.ObjectKeyFromObject(frq), &got); err != nil {
			return false, err.Error()
		}
		for _, s := range got.Status.AggregatedStatus {
			if s.ClusterName == east {
				used := s.Used["cpu"]
				return used.Cmp(resource.MustParse("500m")) == 0 && len(got.Status.Overall) == 2, fmt.Sprintf("status %+v", got.Status)
			}
		}
		return false, fmt.Sprintf("status %+v", got.Status)
	})

	t.Log("a Work edited to raise the limit is never applied, and is written back")
	workKey := client.ObjectKey{Namespace: shared.ExecutionNamespace(west), Name: shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ResourceQuota", Namespace: "team-a", Name: "team-a"})}
	var stored workv1.Work
	if err := hub.Get(ctx, workKey, &stored); err != nil {
		t.Fatal(err)
	}
	opts := controllertest.Options("test")
	if _, err := shared.VerifyWork(ctx, hub, &stored, west, opts); err != nil {
		t.Fatalf("the controller's own Work: %v", err)
	}
	raised := stored.DeepCopy()
	raised.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"team-a","namespace":"team-a"},"spec":{"hard":{"cpu":"64"}}}`)}}}
	if _, err := shared.VerifyWork(ctx, hub, raised, west, opts); !errors.Is(err, shared.ErrPending) {
		t.Errorf("a Work with a raised limit: VerifyWork = %v, want it held (ErrPending)", err)
	}
	forged := stored.DeepCopy()
	forged.Labels[shared.LabelQuotaID] = "not-the-uid"
	if _, err := shared.VerifyWork(ctx, hub, forged, west, opts); !shared.IsRefused(err) {
		t.Errorf("a Work naming another UID: VerifyWork = %v, want refused", err)
	}
	var w workv1.Work
	testkit.MustUpdate(t, hub, workKey, &w, func() { w.Spec.Workload.Manifests = raised.Spec.Workload.Manifests })
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		var rq corev1.ResourceQuota
		if err := f.Members[west].Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &rq); err != nil {
			t.Fatal(err)
		}
		if got := rq.Spec.Hard["cpu"]; got.Cmp(resource.MustParse("3")) != 0 {
			t.Fatalf("the raised limit reached the member: hard %v", rq.Spec.Hard)
		}
	}
	testkit.Eventually(t, deadline, "the Work written back", func() (bool, string) {
		if err := hub.Get(ctx, workKey, &w); err != nil {
			return false, err.Error()
		}
		_, err := shared.VerifyWork(ctx, hub, &w, west, opts)
		return err == nil, fmt.Sprintf("verify: %v", err)
	})

	t.Log("an assignment removed is pruned from its member")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(frq), frq, func() { frq.Spec.StaticAssignments = frq.Spec.StaticAssignments[:1] })
	waitGone(t, f.Members[west])

	t.Log("deleting the quota removes the rest")
	if err := hub.Delete(ctx, frq); err != nil {
		t.Fatal(err)
	}
	waitGone(t, f.Members[east])
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// waitHard waits for the member's ResourceQuota team-a/team-a to limit
// name to want, and stay so for a moment.
func waitHard(t *testing.T, member client.Client, name corev1.ResourceName, want string) {
	t.Helper()
	testkit.Eventually(t, deadline, "ResourceQuota hard "+string(name)+"="+want, func() (bool, string) {
		var rq corev1.ResourceQuota
		if err := member.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &rq); err != nil {
			return false, err.Error()
		}
		got := rq.Spec.Hard[name]
		return got.Cmp(resource.MustParse(want)) == 0, fmt.Sprintf("hard %v", rq.Spec.Hard)
	})
}

// waitGone waits for the member's ResourceQuota team-a/team-a to be deleted.
func waitGone(t *testing.T, member client.Client) {
	t.Helper()
	testkit.Eventually(t, deadline, "ResourceQuota removed", func() (bool, string) {
		var rq corev1.ResourceQuota
		err := member.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "team-a"}, &rq)
		return shared.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}
