package e2e_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestPropagateMoveAndFailover runs the reconcilers against a real host
// apiserver and three real member apiservers: a Deployment is divided over
// the members, follows a policy change, reports aggregated status, and moves
// off a member whose apiserver is stopped.
func TestPropagateMoveAndFailover(t *testing.T) {
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, memberClients, members, names := env.Hub, env.Members, env.Clusters, env.Names
	ctx := t.Context()

	pp := controllertest.CreatePolicy(t, hub, controllertest.WebPolicy(names...).Divided(api.ReplicaDivisionPreferenceWeighted))
	testkit.MustCreate(t, hub, controllertest.Deployment(6))

	t.Log("propagate: 6 replicas divided over three members")
	controllertest.WaitReplicas(t, memberClients, map[string]int32{names[0]: 2, names[1]: 2, names[2]: 2})

	t.Log("policy change: the third member is dropped and pruned")
	controllertest.PlaceOn(t, hub, pp, names[:2]...)
	controllertest.WaitReplicas(t, memberClients, map[string]int32{names[0]: 3, names[1]: 3, names[2]: -1})

	t.Log("aggregated status: members report ready replicas, the template sums them")
	for _, n := range names[:2] {
		controllertest.SetReady(t, memberClients[n], 3)
	}
	testkit.Eventually(t, controllertest.Deadline, "template status readyReplicas=6", func() (bool, string) {
		var d appsv1.Deployment
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 6, fmt.Sprintf("status %+v", d.Status)
	})

	t.Log("failover: the first member's apiserver stops")
	start := time.Now()
	members[0].StopAPIServer()
	testkit.Eventually(t, controllertest.Deadline, "cluster NotReady with a NoExecute taint", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: names[0]}, &cl); err != nil {
			return false, err.Error()
		}
		noExecute := false
		for _, taint := range cl.Spec.Taints {
			noExecute = noExecute || (taint.Key == api.TaintClusterNotReady && taint.Effect == corev1.TaintEffectNoExecute)
		}
		return apimeta.IsStatusConditionFalse(cl.Status.Conditions, api.ClusterConditionReady) && noExecute, fmt.Sprintf("taints %v", cl.Spec.Taints)
	})
	tainted := time.Since(start)
	controllertest.WaitReplicas(t, map[string]client.Client{names[1]: memberClients[names[1]]}, map[string]int32{names[1]: 6})
	t.Logf("failover: NotReady+NoExecute after %v, all 6 replicas on %s after %v (failure threshold 1s, NoExecute after 2s)",
		tainted.Round(10*time.Millisecond), names[1], time.Since(start).Round(10*time.Millisecond))

	t.Log("delete: the template's objects leave the reachable members")
	if err := hub.Delete(ctx, controllertest.Deployment(0)); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitReplicas(t, map[string]client.Client{names[1]: memberClients[names[1]]}, map[string]int32{names[1]: -1})
}
