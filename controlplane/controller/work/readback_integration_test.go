package work_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestStatusBackstopReadsOnlyWhatChanged: with the status backstop at one
// second (and the execution's resync out of the way), a Work whose member
// object the watch holds unchanged costs the member no request at all over
// four backstops. A member status change reaches the host template from
// the watch's copy of the object, without a member GET. The backstop still
// reads what it cannot vouch for: a manifest status someone else wrote
// into the Work on the host is put back at the next backstop.
func TestStatusBackstopReadsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 1)
	env.StartControlPlane(t, func(o *shared.Options) { o.Resync, o.StatusResync = 10*time.Minute, time.Second })
	hub, name := env.Hub, env.Names[0]
	m := env.Members[name]
	ctx := t.Context()

	controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(name))
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, env.Members, map[string]int32{name: 2})
	work := webWork(name)
	controllertest.SetReady(t, m, 2)
	waitTemplateReady(t, hub, 2)
	waitWorkAvailable(t, hub, work)
	// A backstop or two so the watch has seen the last change read.
	time.Sleep(2 * time.Second)

	t.Log("nothing changed: four backstops send nothing to the member")
	quietFor(t, env.Clusters[0], 4*time.Second, "4 status backstops")

	t.Log("the member's status changes twice: the host template follows each time, read from the watch's copy, without a member GET")
	var d appsv1.Deployment
	if err := m.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	// The test's own writes are PATCHes, so every GET counted is the
	// control plane's.
	gets := deploymentGets(t, env.Clusters[0])
	for _, ready := range []int64{1, 2} {
		patch := fmt.Sprintf(`{"status":{"observedGeneration":%[1]d,"replicas":%[2]d,"updatedReplicas":%[2]d,"readyReplicas":%[2]d,"availableReplicas":%[2]d}}`, d.Generation, ready)
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
		if err := m.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatalf("set the status of web in %s: %v", name, err)
		}
		waitTemplateReady(t, hub, int32(ready))
	}
	if after := deploymentGets(t, env.Clusters[0]); after != gets {
		t.Fatalf("member GETs of deployments over two status changes the watch delivered: %v, then %v; want none", gets, after)
	}

	t.Log("a manifest status written on the host by someone else is put back at the next backstop")
	var w workv1.Work
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := hub.Get(ctx, work, &w); err != nil {
			return err
		}
		w.Status.ManifestStatuses[0].Status = &runtime.RawExtension{Raw: []byte(`{"readyReplicas":7,"replicas":7}`)}
		return hub.Status().Update(ctx, &w)
	}); err != nil {
		t.Fatalf("write a manifest status into work %s: %v", work, err)
	}
	testkit.Eventually(t, 10*time.Second, "forged manifest status put back", func() (bool, string) {
		if err := hub.Get(ctx, work, &w); err != nil {
			return false, err.Error()
		}
		got := string(w.Status.ManifestStatuses[0].Status.Raw)
		return !strings.Contains(got, `"readyReplicas":7`) && strings.Contains(got, `"readyReplicas":2`), "status " + got
	})
}
