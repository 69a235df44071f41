package controller_test

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const deadline = 30 * time.Second

// TestPropagateMoveAndFailover runs the reconcilers against a real host
// apiserver and three real member apiservers: a Deployment is divided over
// the members, follows a policy change, reports aggregated status, and moves
// off a member whose apiserver is stopped.
func TestPropagateMoveAndFailover(t *testing.T) {
	env := startControlPlane(t)
	hub, memberClients, members, names := env.hub, env.members, env.fleet, env.names
	ctx := t.Context()

	pp := createPolicy(t, hub, webPolicy(names...).Divided(api.ReplicaDivisionPreferenceWeighted))
	testkit.MustCreate(t, hub, deployment(6))

	t.Log("propagate: 6 replicas divided over three members")
	waitReplicas(t, memberClients, map[string]int32{names[0]: 2, names[1]: 2, names[2]: 2})

	t.Log("policy change: the third member is dropped and pruned")
	placeOn(t, hub, pp, names[:2]...)
	waitReplicas(t, memberClients, map[string]int32{names[0]: 3, names[1]: 3, names[2]: -1})

	t.Log("aggregated status: members report ready replicas, the template sums them")
	for _, n := range names[:2] {
		setReady(t, memberClients[n], 3)
	}
	testkit.Eventually(t, deadline, "template status readyReplicas=6", func() (bool, string) {
		var d appsv1.Deployment
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 6, fmt.Sprintf("status %+v", d.Status)
	})

	t.Log("failover: the first member's apiserver stops")
	start := time.Now()
	members[0].StopAPIServer()
	testkit.Eventually(t, deadline, "cluster NotReady with a NoExecute taint", func() (bool, string) {
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
	waitReplicas(t, map[string]client.Client{names[1]: memberClients[names[1]]}, map[string]int32{names[1]: 6})
	t.Logf("failover: NotReady+NoExecute after %v, all 6 replicas on %s after %v (failure threshold 1s, NoExecute after 2s)",
		tainted.Round(10*time.Millisecond), names[1], time.Since(start).Round(10*time.Millisecond))

	t.Log("delete: the template's objects leave the reachable members")
	if err := hub.Delete(ctx, deployment(0)); err != nil {
		t.Fatal(err)
	}
	waitReplicas(t, map[string]client.Client{names[1]: memberClients[names[1]]}, map[string]int32{names[1]: -1})
}

// controlPlane is a running control plane over a real host apiserver and
// three real member apiservers registered as Clusters.
type controlPlane = fleetEnv

// startControlPlane starts a host and three members, installs the CRDs,
// registers the members and runs the reconcilers with short periods.
func startControlPlane(t *testing.T) controlPlane {
	t.Helper()
	env := startFleet(t)
	env.startManager(t)
	return env
}

func deployment(replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// setReady plays the member's deployment controller, which APIServerOnly
// members do not run.
func setReady(t *testing.T, c client.Client, n int32) {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	if err := c.Status().Update(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
}

// waitReplicas waits until each member's Deployment web has the given
// replicas; -1 means it must not exist.
func waitReplicas(t *testing.T, clients map[string]client.Client, want map[string]int32) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("replicas %v", want), func() (bool, string) {
		got := map[string]int32{}
		for name, c := range clients {
			var d appsv1.Deployment
			err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d)
			switch {
			case apierrors.IsNotFound(err):
				got[name] = -1
			case err != nil:
				return false, err.Error()
			default:
				got[name] = ptr.Deref(d.Spec.Replicas, 1)
			}
		}
		for name, n := range want {
			if got[name] != n {
				return false, fmt.Sprintf("got %v", got)
			}
		}
		return true, ""
	})
}

// webPolicy starts PropagationPolicy default/web, which selects Deployment
// web and places it on the named clusters.
func webPolicy(clusters ...string) *apitest.PropagationPolicyWrapper {
	return apitest.MakePropagationPolicy("web", "default").SelectName("apps/v1", "Deployment", "web").ClusterNames(clusters...)
}

// createPolicy creates the built policy on the host and returns it.
func createPolicy(t *testing.T, hub client.Client, w *apitest.PropagationPolicyWrapper) *policyv1.PropagationPolicy {
	t.Helper()
	p := w.Obj()
	pp := &policyv1.PropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	testkit.MustCreate(t, hub, pp)
	return pp
}

// placeOn updates the policy on the host to place on the named clusters
// (placement.clusterAffinity.clusterNames).
func placeOn(t *testing.T, hub client.Client, pp *policyv1.PropagationPolicy, clusters ...string) {
	t.Helper()
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(pp), pp, func() {
		pp.Spec.Placement.ClusterAffinity.ClusterNames = clusters
	})
}
