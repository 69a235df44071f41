package descheduler_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

const ns = "shop"

// TestDeschedulerMovesUnschedulableReplicas runs the control plane with
// the descheduler (1 s interval, 2 s threshold) over two Full members
// (real kube-controller-manager and kube-scheduler, kwok nodes). Four
// Deployments are placed on both: web (dynamic weights), dup (Duplicated),
// static (static weights) and api (dynamic weights, its pods held by a
// scheduling gate). Then cramped's node is cordoned and the running pods
// of web, dup and static there are deleted: their replacements stay
// Pending, unschedulable. In another namespace of cramped a tenant's pods
// pose as api's: its labels and its ReplicaSet as their controller.
//
// web's two replicas leave cramped for roomy, where they run, with an
// event and the metric; its Deployment and Pending pods leave cramped.
// dup and static keep their placement and their Pending pods, and api
// keeps its placement: its gated pods are not unschedulable, and the
// tenant's pods are not its.
func TestDeschedulerMovesUnschedulableReplicas(t *testing.T) {
	start := time.Now()
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	members := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.Full}).Clusters
	hub := controllertest.SystemHost(t, host)
	for _, m := range members {
		controllertest.RegisterMember(t, hub, m)
	}
	clients, names := controllertest.MemberClients(t, members, controllertest.Scheme(t))
	cramped, roomy := names[0], names[1]
	controllertest.Namespaces(t, hub, ns)

	policy := func(name string) *apitest.PropagationPolicyWrapper {
		return apitest.MakePropagationPolicy(name, ns).SelectName("apps/v1", "Deployment", name).ClusterNames(cramped, roomy)
	}
	f := controllertest.Fleet{Host: host, Hub: hub, Clusters: members, Names: names, Scheme: controllertest.Scheme(t)}
	f.StartControlPlane(t, func(o *shared.Options) {
		o.Descheduler, o.DeschedulingInterval, o.UnschedulableThreshold = true, time.Second, 2*time.Second
	})
	// Both members Ready and summarized (their nodes watched), so the
	// first schedule divides between them.
	for _, name := range names {
		waitSummarized(t, hub, name)
	}
	controllertest.CreatePolicy(t, hub, policy("web").DynamicWeight())
	controllertest.CreatePolicy(t, hub, policy("dup").Duplicated())
	controllertest.CreatePolicy(t, hub, policy("static").Weight(1, cramped, roomy))
	controllertest.CreatePolicy(t, hub, policy("api").DynamicWeight())
	testkit.MustCreate(t, hub, deployment("web", 4, nil))
	testkit.MustCreate(t, hub, deployment("dup", 2, nil))
	testkit.MustCreate(t, hub, deployment("static", 4, nil))
	testkit.MustCreate(t, hub, deployment("api", 4, []corev1.PodSchedulingGate{{Name: "example.com/wait"}}))

	placed := map[string]map[string]int32{
		"web": {cramped: 2, roomy: 2}, "dup": {cramped: 2, roomy: 2}, "static": {cramped: 2, roomy: 2}, "api": {cramped: 2, roomy: 2},
	}
	for name, want := range placed {
		waitPlacement(t, hub, name, want)
	}
	member := clients[cramped]
	for _, name := range []string{"web", "dup", "static"} {
		waitPods(t, member, name, corev1.PodRunning, 2)
	}
	waitPods(t, member, "api", corev1.PodPending, 2)
	before := testutil.ToFloat64(metrics.DescheduledReplicas.WithLabelValues(cramped))

	t.Log("cramped's node is cordoned and the running pods there are deleted: their replacements cannot be scheduled")
	cordon(t, member)
	for _, name := range []string{"web", "dup", "static"} {
		if err := member.DeleteAllOf(t.Context(), &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			t.Fatal(err)
		}
	}
	forgeTenantPods(t, member, "api")

	t.Log("web's replicas leave cramped for roomy, where they run")
	waitPlacement(t, hub, "web", map[string]int32{roomy: 4})
	waitPods(t, clients[roomy], "web", corev1.PodRunning, 4)
	testkit.Eventually(t, controllertest.Deadline, "web's Deployment gone from "+cramped, func() (bool, string) {
		err := member.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	waitPods(t, member, "web", corev1.PodPending, 0)
	// The two pods may pass the threshold in different passes: one move
	// of two replicas, or two of one.
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonDescheduleBindingSucceed, Type: corev1.EventTypeNormal, Note: " of 2 replica(s) from cluster " + cramped},
		{Kind: "ResourceBinding", Reason: shared.EventReasonDescheduleBindingSucceed, Type: corev1.EventTypeNormal, Note: " of 2 replica(s) from cluster " + cramped},
	})
	if got := testutil.ToFloat64(metrics.DescheduledReplicas.WithLabelValues(cramped)) - before; got != 2 {
		t.Fatalf("flotilla_descheduled_replicas_total{member_cluster=%q} grew by %v, want 2", cramped, got)
	}

	t.Log("several passes later: Duplicated, static weights and the gated api are where they were")
	time.Sleep(3 * time.Second)
	for _, name := range []string{"dup", "static", "api"} {
		if got, err := placement(t, hub, name); err != nil || fmt.Sprint(got) != fmt.Sprint(placed[name]) {
			t.Fatalf("%s placed %v (%v), want %v as before", name, got, err, placed[name])
		}
	}
	for _, name := range []string{"dup", "static"} {
		waitPods(t, member, name, corev1.PodPending, 2)
	}
	// A move the scheduler undid at once (Duplicated and static weights
	// place by the policy alone) would still show here.
	if got := testutil.ToFloat64(metrics.DescheduledReplicas.WithLabelValues(cramped)) - before; got != 2 {
		t.Fatalf("flotilla_descheduled_replicas_total{member_cluster=%q} grew by %v, want only web's 2", cramped, got)
	}
	var events eventsv1.EventList
	if err := hub.List(t.Context(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Reason == shared.EventReasonDescheduleBindingSucceed && e.Regarding.Kind == "Deployment" && e.Regarding.Name != "web" {
			t.Fatalf("%s was descheduled: %s", e.Regarding.Name, e.Note)
		}
	}
	t.Logf("TestDeschedulerMovesUnschedulableReplicas: %v", time.Since(start).Round(10*time.Millisecond))
}

// waitSummarized waits until the Cluster is Ready with a resource summary.
func waitSummarized(t *testing.T, hub client.Client, name string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, "cluster "+name+" ready and summarized", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(t.Context(), client.ObjectKey{Name: name}, &cl); err != nil {
			return false, err.Error()
		}
		s := cl.Status.ResourceSummary
		return apimeta.IsStatusConditionTrue(cl.Status.Conditions, api.ClusterConditionReady) && s != nil && len(s.Allocatable) > 0,
			fmt.Sprint(cl.Status.Conditions)
	})
}

// deployment is a Deployment of ns with no requests; gates hold its pods.
func deployment(name string, replicas int32, gates []corev1.PodSchedulingGate) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{SchedulingGates: gates, Containers: []corev1.Container{{Name: name, Image: "nginx"}}},
			},
		},
	}
}

// cordon marks every node of the member unschedulable.
func cordon(t *testing.T, c client.Client) {
	t.Helper()
	var nodes corev1.NodeList
	if err := c.List(t.Context(), &nodes); err != nil {
		t.Fatal(err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		testkit.MustUpdate(t, c, client.ObjectKeyFromObject(n), n, func() { n.Spec.Unschedulable = true })
	}
}

// forgeTenantPods puts two pods in namespace evil of the member that pose
// as victim's: its pods' labels, and its ReplicaSet's name and UID as
// their controller's. They cannot be scheduled (the node is cordoned).
func forgeTenantPods(t *testing.T, c client.Client, victim string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": victim}); err != nil || len(pods.Items) == 0 {
		t.Fatalf("pods of %s: %v (%d)", victim, err, len(pods.Items))
	}
	model := pods.Items[0]
	rs := metav1.GetControllerOf(&model)
	if rs == nil {
		t.Fatalf("pod %s has no controller", model.Name)
	}
	// The member's garbage collector deletes a pod whose owner it cannot
	// find in the pod's namespace, which a ReplicaSet of another namespace
	// is not; an owner of a kind it cannot resolve it leaves alone, so the
	// forged controller keeps the ReplicaSet's name and UID under such a
	// kind.
	forged := []metav1.OwnerReference{{APIVersion: "forged.example.com/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	testkit.MustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "evil"}})
	for i := range 2 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "evil", Name: fmt.Sprintf("%s-forged-%d", victim, i), Labels: model.Labels, OwnerReferences: forged},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: victim, Image: "nginx"}}},
		}
		// The namespace's default ServiceAccount, which pods need, comes
		// from kube-controller-manager a moment later.
		testkit.Eventually(t, controllertest.Deadline, "forged pod "+p.Name, func() (bool, string) {
			err := c.Create(t.Context(), p)
			return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
		})
	}
}

func bindingKey(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: ns, Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, name)}
}

// placement is the clusters of Deployment name's binding.
func placement(t *testing.T, hub client.Client, name string) (map[string]int32, error) {
	var rb workv1.ResourceBinding
	if err := hub.Get(t.Context(), bindingKey(name), &rb); err != nil {
		return nil, err
	}
	got := map[string]int32{}
	for _, c := range rb.Spec.Clusters {
		got[c.Name] = c.Replicas
	}
	return got, nil
}

func waitPlacement(t *testing.T, hub client.Client, name string, want map[string]int32) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%s placed %v", name, want), func() (bool, string) {
		got, err := placement(t, hub, name)
		return err == nil && fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got, err)
	})
}

// waitPods waits until exactly n pods of app name in ns are in phase.
func waitPods(t *testing.T, c client.Client, name string, phase corev1.PodPhase, n int) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, fmt.Sprintf("%d %s pods of %s", n, phase, name), func() (bool, string) {
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			return false, err.Error()
		}
		got := 0
		for _, p := range pods.Items {
			if p.Status.Phase == phase && p.DeletionTimestamp.IsZero() {
				got++
			}
		}
		return got == n, fmt.Sprintf("%d of %d", got, len(pods.Items))
	})
}
