package shared

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// probedCluster is a Ready member as the cluster status controller leaves it.
func probedCluster() *clusterv1.Cluster {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "east", Generation: 1, Labels: map[string]string{"tier": "prod"}},
		Status: api.ClusterStatus{
			KubernetesVersion: "v1.35.4",
			Conditions: []metav1.Condition{
				{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", LastTransitionTime: at},
				{Type: api.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue, Reason: "Complete", LastTransitionTime: at},
			},
			APIEnablements: []api.APIEnablement{{GroupVersion: "apps/v1", Resources: []api.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			NodeSummary:    &api.NodeSummary{TotalNum: 3, ReadyNum: 3},
			ResourceSummary: &api.ResourceSummary{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
				Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			},
		},
	}
}

func TestSchedulingChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *clusterv1.Cluster)
		want   bool
	}{
		{"nothing", func(*clusterv1.Cluster) {}, false},
		{"pods take more cpu (a heartbeat)", func(c *clusterv1.Cluster) {
			c.Status.ResourceSummary.Allocated[corev1.ResourceCPU] = resource.MustParse("2")
			c.Status.ResourceSummary.Allocating = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, false},
		{"condition message and time only", func(c *clusterv1.Cluster) {
			c.Status.Conditions[0].Message = "still healthy"
			c.Status.Conditions[0].LastTransitionTime = metav1.Now()
		}, false},
		{"kubernetes version", func(c *clusterv1.Cluster) { c.Status.KubernetesVersion = "v1.35.5" }, false},
		{"resourceVersion", func(c *clusterv1.Cluster) { c.ResourceVersion = "42" }, false},
		{"spec (a taint): new generation", func(c *clusterv1.Cluster) { c.Generation = 2 }, true},
		{"labels", func(c *clusterv1.Cluster) { c.Labels["tier"] = "dev" }, true},
		{"Ready flips", func(c *clusterv1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		{"Ready goes", func(c *clusterv1.Cluster) { c.Status.Conditions = c.Status.Conditions[1:] }, true},
		{"API enablements complete flips", func(c *clusterv1.Cluster) { c.Status.Conditions[1].Status = metav1.ConditionFalse }, true},
		{"API enablements", func(c *clusterv1.Cluster) { c.Status.APIEnablements = nil }, true},
		{"node count", func(c *clusterv1.Cluster) { c.Status.NodeSummary.ReadyNum = 2 }, true},
		{"allocatable", func(c *clusterv1.Cluster) {
			c.Status.ResourceSummary.Allocatable[corev1.ResourceCPU] = resource.MustParse("16")
		}, true},
		{"allocatable as another quantity string", func(c *clusterv1.Cluster) {
			c.Status.ResourceSummary.Allocatable[corev1.ResourceCPU] = resource.MustParse("8000m")
		}, false},
		{"deletion", func(c *clusterv1.Cluster) { now := metav1.Now(); c.DeletionTimestamp = &now }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldC, newC := probedCluster(), probedCluster()
			tt.change(newC)
			if got := ClusterSchedulingChanged.Update(event.UpdateEvent{ObjectOld: oldC, ObjectNew: newC}); got != tt.want {
				t.Errorf("passes = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestWatchStorms measures what one event enqueues on a host with many
// bindings, through the handlers and predicates the scheduler and binding
// controllers register, against what the handlers before them enqueued.
func TestWatchStorms(t *testing.T) {
	t.Parallel()
	const perNamespace = 100
	namespaces := []string{"shop", "blog", "mail", "wiki"}
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly}).Clusters[0]
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(host.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := crd.Install(t.Context(), hub, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if err := hub.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for i := range perNamespace {
			rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("web-%d-deployment", i)}}
			rb.Spec.Resource = api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: fmt.Sprintf("web-%d", i)}
			if err := hub.Create(t.Context(), rb); err != nil {
				t.Fatal(err)
			}
		}
	}
	total := perNamespace * len(namespaces)

	// enqueued runs one update event through a watch (predicate, then
	// handler) into a fresh queue and counts the requests.
	enqueued := func(p predicate.Predicate, h handler.EventHandler, ev event.UpdateEvent) int {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		if p == nil || p.Update(ev) {
			h.Update(context.Background(), ev, q)
		}
		return q.Len()
	}
	before := handler.EnqueueRequestsFromMapFunc(AllBindings(hub))

	heartbeatOld, heartbeatNew := probedCluster(), probedCluster()
	heartbeatNew.Status.ResourceSummary.Allocated[corev1.ResourceCPU] = resource.MustParse("3")
	flipOld, flipNew := probedCluster(), probedCluster()
	flipNew.Status.Conditions[0].Status = metav1.ConditionFalse
	opOld := &policyv1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "images", Generation: 1}}
	opNew := opOld.DeepCopy()
	opNew.Generation = 2
	copOld := &policyv1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "images", Generation: 1}}
	copNew := copOld.DeepCopy()
	copNew.Generation = 2

	tests := []struct {
		name                string
		ev                  event.UpdateEvent
		after               handler.EventHandler
		pred                predicate.Predicate
		wantBefore, wantNow int
	}{
		{"Cluster heartbeat (allocated cpu)", event.UpdateEvent{ObjectOld: heartbeatOld, ObjectNew: heartbeatNew},
			handler.EnqueueRequestsFromMapFunc(AllBindings(hub)), ClusterSchedulingChanged, total, 0},
		{"Cluster Ready flip", event.UpdateEvent{ObjectOld: flipOld, ObjectNew: flipNew},
			handler.EnqueueRequestsFromMapFunc(AllBindings(hub)), ClusterSchedulingChanged, total, total},
		{"OverridePolicy in one namespace", event.UpdateEvent{ObjectOld: opOld, ObjectNew: opNew},
			handler.EnqueueRequestsFromMapFunc(BindingsOfNamespace(hub)), predicate.GenerationChangedPredicate{}, total, perNamespace},
		{"OverridePolicy metadata only", event.UpdateEvent{ObjectOld: opOld, ObjectNew: opOld.DeepCopy()},
			handler.EnqueueRequestsFromMapFunc(BindingsOfNamespace(hub)), predicate.GenerationChangedPredicate{}, total, 0},
		{"ClusterOverridePolicy", event.UpdateEvent{ObjectOld: copOld, ObjectNew: copNew},
			handler.EnqueueRequestsFromMapFunc(AllBindings(hub)), predicate.GenerationChangedPredicate{}, total, total},
	}
	for _, tt := range tests {
		b, n := enqueued(nil, before, tt.ev), enqueued(tt.pred, tt.after, tt.ev)
		t.Logf("%s: %d reconcile requests before, %d now (%d bindings in %d namespaces)", tt.name, b, n, total, len(namespaces))
		if b != tt.wantBefore || n != tt.wantNow {
			t.Errorf("%s: %d requests before and %d now, want %d and %d", tt.name, b, n, tt.wantBefore, tt.wantNow)
		}
	}
}
