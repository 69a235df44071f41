package e2e_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestEventsAndFailoverMetrics runs the reconcilers against a real host and
// three real members and reads the Events they record (events.k8s.io/v1)
// back from the host: a schedule on the binding and its template, an
// unschedulable template, the Works applied, the Clusters ready; then a
// member's apiserver stops and the Cluster turns NotReady and tainted, its
// Works report the sync failed, the bindings fail over (events and
// flotilla_failovers_total) and, once the grace period is over, the
// evicted copies' evictions end (events and flotilla_evictions_total).
func TestEventsAndFailoverMetrics(t *testing.T) {
	env := controllertest.StartFleet(t, 3)
	env.StartControlPlane(t, func(o *shared.Options) { o.GracefulEvictionTimeout = 2 * time.Second })
	hub, names := env.Hub, env.Names
	web := hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")

	// A Deployment divided over the three members (and a ConfigMap on each).
	propagate(t, env)
	nowhere := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nowhere"}}
	testkit.MustYAML(t, nowhere, `
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: nowhere
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {region: nowhere}
`)
	testkit.MustCreate(t, hub, nowhere)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nowhere"}})

	nowhereBinding := hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "nowhere")
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "ResourceBinding", Name: web, Reason: shared.EventReasonScheduleBindingSucceed, Type: corev1.EventTypeNormal, Note: names[0] + " (2 replicas)"},
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonScheduleBindingSucceed, Type: corev1.EventTypeNormal, Note: names[0] + " (2 replicas)"},
		{Kind: "ResourceBinding", Name: nowhereBinding, Reason: shared.EventReasonScheduleBindingFailed, Type: corev1.EventTypeWarning},
		{Kind: "ConfigMap", Name: "nowhere", Reason: shared.EventReasonScheduleBindingFailed, Type: corev1.EventTypeWarning},
		{Kind: "Work", Reason: shared.EventReasonSyncSucceed, Type: corev1.EventTypeNormal, Note: "cluster " + names[1]},
		{Kind: "Cluster", Name: names[0], Reason: shared.EventReasonClusterReady, Type: corev1.EventTypeNormal, Note: names[0]},
	})

	failovers := metrics.Failovers.WithLabelValues(metrics.FailoverCluster, names[0])
	evictions := metrics.Evictions.WithLabelValues(names[0])
	failoversBefore, evictionsBefore := testutil.ToFloat64(failovers), testutil.ToFloat64(evictions)

	t.Log("the first member's apiserver stops")
	env.Clusters[0].StopAPIServer()
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "Cluster", Name: names[0], Reason: shared.EventReasonClusterNotReady, Type: corev1.EventTypeWarning},
		{Kind: "Work", Reason: shared.EventReasonSyncFailed, Type: corev1.EventTypeWarning, Note: "ClusterNotReady: cluster " + names[0] + " is not ready"},
		{Kind: "Cluster", Name: names[0], Reason: shared.EventReasonTaintClusterSucceed, Type: corev1.EventTypeNormal, Note: api.TaintClusterNotReady + ":NoExecute"},
		{Kind: "ResourceBinding", Name: web, Reason: shared.EventReasonClusterFailover, Type: corev1.EventTypeWarning, Note: "left cluster " + names[0]},
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonClusterFailover, Type: corev1.EventTypeWarning, Note: "left cluster " + names[0]},
		{Kind: "ResourceBinding", Name: web, Reason: shared.EventReasonEvictWorkloadFromClusterSucceed, Type: corev1.EventTypeNormal, Note: "cluster " + names[0]},
	})
	// Two bindings were on the member: the Deployment's and the ConfigMap's.
	testkit.Eventually(t, controllertest.Deadline, "both failovers and evictions counted", func() (bool, string) {
		f, e := testutil.ToFloat64(failovers)-failoversBefore, testutil.ToFloat64(evictions)-evictionsBefore
		return f == 2 && e == 2, fmt.Sprintf("flotilla_failovers_total{type=cluster,member_cluster=%s} moved by %v, flotilla_evictions_total by %v, want 2 each", names[0], f, e)
	})
}

// TestApplicationFailoverEvents turns the template unhealthy on its only
// cluster while the member stays Ready: the binding and the template get
// an ApplicationFailover event and flotilla_failovers_total{type=application}
// moves by one.
func TestApplicationFailoverEvents(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, names := env.Hub, env.Names
	primary, backup := names[0], names[1]
	primaryHealthy, backupHealthy := &atomic.Bool{}, &atomic.Bool{}
	primaryHealthy.Store(true)
	backupHealthy.Store(true)
	controllertest.PlayDeploymentController(t, env.Members[primary], primaryHealthy)
	controllertest.PlayDeploymentController(t, env.Members[backup], backupHealthy)
	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [%s]
    - affinityName: backup
      clusterNames: [%s]
  # Karmada refuses application failover without propagateDeps, and so do
  # the controllers: an invalid policy claims nothing.
  propagateDeps: true
  failover:
    application:
      decisionConditions:
        # long enough that a loaded machine's first health report, which
        # comes after the copy is created, does not fail it over already
        tolerationSeconds: 4
`, primary, backup)
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, controllertest.Deployment(2))
	controllertest.WaitReplicas(t, env.Members, map[string]int32{primary: 2})
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	testkit.Eventually(t, controllertest.Deadline, "the primary reports Healthy", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(t.Context(), rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return controllertest.HealthOf(&rb, primary) == api.ResourceHealthy, fmt.Sprintf("status %+v", rb.Status.AggregatedStatus)
	})
	failovers := metrics.Failovers.WithLabelValues(metrics.FailoverApplication, primary)
	before := testutil.ToFloat64(failovers)
	primaryHealthy.Store(false)
	note := "left cluster " + primary + ", where the template stayed unhealthy"
	controllertest.WaitEvents(t, hub, []controllertest.EventWant{
		{Kind: "ResourceBinding", Name: rbKey.Name, Reason: shared.EventReasonApplicationFailover, Type: corev1.EventTypeWarning, Note: note},
		{Kind: "Deployment", Name: "web", Reason: shared.EventReasonApplicationFailover, Type: corev1.EventTypeWarning, Note: note},
	})
	if got := testutil.ToFloat64(failovers) - before; got != 1 {
		t.Errorf("flotilla_failovers_total{type=application,member_cluster=%s} moved by %v, want 1", primary, got)
	}
}
