package agent_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/agent"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/work"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// pullEnv is a host, a Push member the control plane reaches with its
// credentials, and a Pull member it has neither credentials nor an
// endpoint for, served by an agent with the identity RegisterAgent made.
type pullEnv struct {
	host       *testenv.Cluster
	hub        client.Client
	members    map[string]client.Client
	push, pull string
	token      string
	pullMember *member.Client
}

func startPullEnv(t *testing.T) pullEnv {
	t.Helper()
	fleet := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly})
	host, pushed, pulled := fleet.Clusters[0], fleet.Clusters[1], fleet.Clusters[2]
	hub := controllertest.SystemHost(t, host)
	controllertest.RegisterMember(t, hub, pushed)
	members, _ := controllertest.MemberClients(t, []*testenv.Cluster{pushed, pulled}, hub.Scheme())
	reg, err := agent.RegisterAgent(t.Context(), hub, pulled.Name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// A watching cache, as the agent command builds.
	mc, err := member.NewCache(member.CacheOptions{Watch: true}).Get(t.Context(), pulled.Name,
		member.Connection{Host: pulled.Host, Token: pulled.Token, ClusterCACertificate: pulled.CAData})
	if err != nil {
		t.Fatal(err)
	}
	return pullEnv{host: host, hub: hub, members: members, push: pushed.Name, pull: pulled.Name, token: reg.Token, pullMember: mc}
}

// startAgent runs the Pull member's agent with a 2 s lease until the
// returned stop is called or the test ends.
func (e pullEnv) startAgent(t *testing.T) (stop func()) {
	t.Helper()
	opts := agent.AgentOptions{
		Cluster: e.pull, LeaseDuration: 2 * time.Second, RenewInterval: 300 * time.Millisecond, StatusInterval: 300 * time.Millisecond,
		Options: controllertest.Options("test"),
	}
	return controllertest.StartManager(t, agentHubConfig(e.host, e.token),
		ctrl.Options{Scheme: controllertest.Scheme(t), Cache: agent.AgentCacheOptions(e.pull)},
		func(mgr manager.Manager) error { return agent.SetupAgent(mgr, e.pullMember, opts) })
}

// waitCluster waits until the Cluster's Ready condition has status ready
// and check passes.
func (e pullEnv) waitCluster(t *testing.T, what string, ready metav1.ConditionStatus, check func(*clusterv1.Cluster) bool) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, what, func() (bool, string) {
		var cl clusterv1.Cluster
		if err := e.hub.Get(t.Context(), client.ObjectKey{Name: e.pull}, &cl); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady)
		return c != nil && c.Status == ready && check(&cl), fmt.Sprintf("ready %+v, spec %+v", c, cl.Spec)
	})
}

// waitScheduled waits until the binding schedules total replicas, every
// scheduled member runs exactly its share, every other member runs none
// (no orphan, no duplicate), and no Work of the Pull cluster is stuck in
// deletion.
func (e pullEnv) waitScheduled(t *testing.T, rbKey client.ObjectKey, total int32) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("members running exactly the %d scheduled replicas", total), func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := e.hub.Get(t.Context(), rbKey, &rb); err != nil {
			return false, err.Error()
		}
		want, sum := map[string]int32{e.push: -1, e.pull: -1}, int32(0)
		for _, tc := range rb.Spec.Clusters {
			want[tc.Name], sum = tc.Replicas, sum+tc.Replicas
		}
		got := map[string]int32{}
		for name, c := range e.members {
			var d appsv1.Deployment
			switch err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); {
			case apierrors.IsNotFound(err):
				got[name] = -1
			case err != nil:
				return false, err.Error()
			default:
				got[name] = ptr.Deref(d.Spec.Replicas, 1)
			}
		}
		var works workv1.WorkList
		if err := e.hub.List(t.Context(), &works, client.InNamespace(shared.ExecutionNamespace(e.pull))); err != nil {
			return false, err.Error()
		}
		stuck := slices.ContainsFunc(works.Items, func(w workv1.Work) bool { return !w.DeletionTimestamp.IsZero() })
		return sum == total && !stuck && maps.Equal(want, got) && len(rb.Spec.GracefulEvictionTasks) == 0,
			fmt.Sprintf("scheduled %v, members %v, a Work stuck in deletion %v, eviction tasks %d", want, got, stuck, len(rb.Spec.GracefulEvictionTasks))
	})
}

// noExecute reports whether a Cluster carries a NoExecute taint.
func noExecute(cl *clusterv1.Cluster) bool {
	return slices.ContainsFunc(cl.Spec.Taints, func(t corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute })
}

// TestPullModeMember: a member the control plane has no credentials or
// endpoint for registers through its agent, gets its share of a
// Deployment through the agent and reports status that aggregates into the
// template, beside a Push member that works as before; a FederatedHPA
// over the template names the Pull member as not measured; a Work written by
// hand into its execution namespace is refused and never applied. The agent stops:
// its lease expires, the cluster turns Unknown and NoExecute, and the
// replicas fail over to the Push member while the Pull member keeps its
// copy. The agent comes back: the cluster is Ready again and the members
// run exactly what the binding schedules (the scheduler divides the
// replicas over both again), with no orphan and no duplicate. The hub (control plane and host
// apiserver) restarts while the agent runs, the Pull cluster stays Ready,
// and a placement change still reaches the Pull member.
func TestPullModeMember(t *testing.T) {
	e := startPullEnv(t)
	ctx := t.Context()
	stopAgent := e.startAgent(t)
	stopControlPlane := controllertest.Fleet{Host: e.host}.StartControlPlane(t)

	// register's identity may not write its Cluster's spec, so spec.id
	// stays as the administrator left it (empty).
	e.waitCluster(t, "the agent registers its member, Ready, with the member's facts", metav1.ConditionTrue, func(cl *clusterv1.Cluster) bool {
		return cl.Spec.SyncMode == api.Pull && cl.Spec.SecretRef == nil && cl.Spec.APIEndpoint == "" && cl.Spec.ID == "" &&
			cl.Status.KubernetesVersion != "" && len(cl.Status.APIEnablements) > 0
	})

	pp := controllertest.CreatePolicy(t, e.hub, controllertest.WebPolicy(e.push, e.pull).Divided(api.ReplicaDivisionPreferenceWeighted))
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	testkit.MustCreate(t, e.hub, controllertest.Deployment(4))
	controllertest.WaitReplicas(t, e.members, map[string]int32{e.push: 2, e.pull: 2})
	controllertest.SetReady(t, e.members[e.push], 2)
	controllertest.SetReady(t, e.members[e.pull], 2)
	testkit.Eventually(t, controllertest.Deadline, "the template's status sums both members", func() (bool, string) {
		var d appsv1.Deployment
		if err := e.hub.Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 4, fmt.Sprintf("status %+v", d.Status)
	})
	checkFederatedHPANamesPull(t, e)
	workKey := client.ObjectKey{Namespace: shared.ExecutionNamespace(e.pull), Name: shared.WorkName(api.TemplateRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})}
	var w workv1.Work
	if err := e.hub.Get(ctx, workKey, &w); err != nil {
		t.Fatal(err)
	}
	if w.Annotations[work.AnnotationVerifiedGeneration] != strconv.FormatInt(w.Generation, 10) || w.Annotations[work.AnnotationWorkSignature] == "" ||
		!apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkApplied) || !apimeta.IsStatusConditionTrue(w.Status.Conditions, api.ConditionWorkAvailable) {
		t.Fatalf("work %s: annotations %v, conditions %+v; want verified by the control plane, applied and observed by the agent", workKey, w.Annotations, w.Status.Conditions)
	}

	t.Log("a Work written by hand into the Pull cluster's execution namespace: refused, never applied, let go when deleted")
	var rb workv1.ResourceBinding
	if err := e.hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	intruder := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "intruder"}}
	forged := controllertest.ForgedWork(t, &rb, e.pull, "intruder", intruder)
	// Another UID than the binding's, so the binding controller does not
	// take the Work for one of its own and delete it first.
	forged.Labels[shared.LabelBindingPermanentID] = "not-the-binding"
	testkit.MustCreate(t, e.hub, forged)
	controllertest.WaitWorkRefused(t, e.hub, client.ObjectKeyFromObject(forged), "is not the UID of binding")
	controllertest.AbsentFor(t, e.members[e.pull], &corev1.ConfigMap{}, client.ObjectKeyFromObject(intruder), 2*time.Second)
	if err := e.hub.Delete(ctx, forged); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "the forged Work gone", func() (bool, string) {
		err := e.hub.Get(ctx, client.ObjectKeyFromObject(forged), &workv1.Work{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})

	t.Log("the agent stops: Unknown after the lease, NoExecute, the replicas fail over")
	stopAgent()
	start := time.Now()
	e.waitCluster(t, "the Pull cluster Unknown and tainted NoExecute", metav1.ConditionUnknown, noExecute)
	controllertest.WaitReplicas(t, map[string]client.Client{e.push: e.members[e.push]}, map[string]int32{e.push: 4})
	controllertest.SetReady(t, e.members[e.push], 4)
	t.Logf("failover of a Pull cluster: all replicas on %s %v after the agent stopped (lease 2s, NoExecute after 2s)", e.push, time.Since(start).Round(10*time.Millisecond))
	controllertest.WaitReplicas(t, map[string]client.Client{e.pull: e.members[e.pull]}, map[string]int32{e.pull: 2})

	t.Log("the agent comes back: Ready again; the members hold exactly what the binding schedules, no orphan, no duplicate")
	e.startAgent(t)
	e.waitCluster(t, "the Pull cluster Ready and untainted", metav1.ConditionTrue, func(cl *clusterv1.Cluster) bool { return len(cl.Spec.Taints) == 0 })
	e.waitScheduled(t, rbKey, 4)
	t.Log("the hub restarts while the agent runs: control plane stopped, host apiserver down longer than the lease")
	stopControlPlane()
	forgeWhileTheControlPlaneIsAway(t, e, &rb, &w)
	e.host.StopAPIServer()
	time.Sleep(3 * time.Second)
	if err := e.host.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	controllertest.Fleet{Host: e.host}.StartControlPlane(t)
	e.waitCluster(t, "the Pull cluster Ready and untainted after the hub restart", metav1.ConditionTrue, func(cl *clusterv1.Cluster) bool { return len(cl.Spec.Taints) == 0 })
	e.waitScheduled(t, rbKey, 4)

	t.Log("a new placement reaches the Pull member through the agent that lived through the hub restart")
	controllertest.PlaceOn(t, e.hub, pp, e.pull)
	controllertest.WaitReplicas(t, e.members, map[string]int32{e.push: -1, e.pull: 4})
	testkit.Eventually(t, controllertest.Deadline, "the binding fully applied on the Pull member alone", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := e.hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionFullyApplied) && len(rb.Status.AggregatedStatus) == 1 &&
			rb.Status.AggregatedStatus[0].ClusterName == e.pull, fmt.Sprintf("status %+v", rb.Status)
	})
}

// forgeWhileTheControlPlaneIsAway writes, while no control plane runs to
// take the verification back, a Work into the Pull cluster's execution
// namespace that carries the verified annotation for its generation and
// the signatures of the real Work legit: the agent must neither apply it
// nor, once it is deleted, remove anything for it. It checks, too, that the
// control plane published its key on the Cluster and keeps it in
// flotilla-system.
func forgeWhileTheControlPlaneIsAway(t *testing.T, e pullEnv, rb *workv1.ResourceBinding, legit *workv1.Work) {
	t.Helper()
	ctx := t.Context()
	var cl clusterv1.Cluster
	if err := e.hub.Get(ctx, client.ObjectKey{Name: e.pull}, &cl); err != nil {
		t.Fatal(err)
	}
	if cl.Annotations[work.AnnotationSigningKey] == "" {
		t.Fatalf("cluster %s: no %s annotation; want the control plane's public key", e.pull, work.AnnotationSigningKey)
	}
	if err := e.hub.Get(ctx, client.ObjectKey{Namespace: shared.SystemNamespace, Name: work.SigningKeySecret}, &corev1.Secret{}); err != nil {
		t.Fatalf("the control plane's signing key: %v", err)
	}
	// The intruder carries the ownership marks a rendering would give it
	// (anyone can compute them), so nothing but the signature stops it.
	ref := api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "intruder-signed"}
	intruder := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{
		Namespace: ref.Namespace, Name: ref.Name,
		Labels:      map[string]string{render.LabelManagedBy: render.ManagedByFlotilla, render.LabelFleet: "test", render.LabelTemplateID: ref.ID()},
		Annotations: map[string]string{render.AnnotationTemplate: ref.String()},
	}}
	forged := controllertest.ForgedWork(t, rb, e.pull, "intruder-signed", intruder)
	forged.Labels[shared.LabelBindingPermanentID] = "not-the-binding"
	forged.Annotations = map[string]string{
		work.AnnotationVerifiedGeneration:   "1",
		shared.AnnotationConflictResolution: "Overwrite",
		work.AnnotationWorkSignature:        legit.Annotations[work.AnnotationWorkSignature],
		work.AnnotationOwnerSignature:       legit.Annotations[work.AnnotationOwnerSignature],
	}
	testkit.MustCreate(t, e.hub, forged)
	controllertest.AbsentFor(t, e.members[e.pull], &corev1.ConfigMap{}, client.ObjectKeyFromObject(intruder), 3*time.Second)
	if err := e.hub.Delete(ctx, forged); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "the forged Work let go by the agent", func() (bool, string) {
		err := e.hub.Get(ctx, client.ObjectKeyFromObject(forged), &workv1.Work{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
