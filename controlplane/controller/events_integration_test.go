package controller_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// eventWant is one event expected on the host: on the object of that kind
// and name (any name when empty), with the reason, type and a note that
// contains note.
type eventWant struct {
	kind, name, reason, eventType, note string
}

// TestEventsAndFailoverMetrics runs the reconcilers against a real host and
// three real members and reads the Events they record (events.k8s.io/v1)
// back from the host: a schedule on the binding and its template, an
// unschedulable template, the Works applied, the Clusters ready; then a
// member's apiserver stops and the Cluster turns NotReady and tainted, its
// Works report the sync failed, the bindings fail over (events and
// flotilla_failovers_total) and, once the grace period is over, the
// evicted copies' evictions end (events and flotilla_evictions_total).
func TestEventsAndFailoverMetrics(t *testing.T) {
	env := startFleet(t)
	env.startManager(t, func(o *shared.Options) { o.GracefulEvictionTimeout = 2 * time.Second })
	hub, names := env.hub, env.names
	web := hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")

	// A Deployment divided over the three members (and a ConfigMap on each).
	env.propagate(t)
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
	waitEvents(t, hub, []eventWant{
		{"ResourceBinding", web, shared.EventReasonScheduleBindingSucceed, corev1.EventTypeNormal, names[0] + " (2 replicas)"},
		{"Deployment", "web", shared.EventReasonScheduleBindingSucceed, corev1.EventTypeNormal, names[0] + " (2 replicas)"},
		{"ResourceBinding", nowhereBinding, shared.EventReasonScheduleBindingFailed, corev1.EventTypeWarning, ""},
		{"ConfigMap", "nowhere", shared.EventReasonScheduleBindingFailed, corev1.EventTypeWarning, ""},
		{"Work", "", shared.EventReasonSyncSucceed, corev1.EventTypeNormal, "cluster " + names[1]},
		{"Cluster", names[0], shared.EventReasonClusterReady, corev1.EventTypeNormal, names[0]},
	})

	failovers := metrics.Failovers.WithLabelValues(metrics.FailoverCluster, names[0])
	evictions := metrics.Evictions.WithLabelValues(names[0])
	failoversBefore, evictionsBefore := testutil.ToFloat64(failovers), testutil.ToFloat64(evictions)

	t.Log("the first member's apiserver stops")
	env.fleet[0].StopAPIServer()
	waitEvents(t, hub, []eventWant{
		{"Cluster", names[0], shared.EventReasonClusterNotReady, corev1.EventTypeWarning, ""},
		{"Work", "", shared.EventReasonSyncFailed, corev1.EventTypeWarning, "ClusterNotReady: cluster " + names[0] + " is not ready"},
		{"Cluster", names[0], shared.EventReasonTaintClusterSucceed, corev1.EventTypeNormal, api.TaintClusterNotReady + ":NoExecute"},
		{"ResourceBinding", web, shared.EventReasonClusterFailover, corev1.EventTypeWarning, "left cluster " + names[0]},
		{"Deployment", "web", shared.EventReasonClusterFailover, corev1.EventTypeWarning, "left cluster " + names[0]},
		{"ResourceBinding", web, shared.EventReasonEvictWorkloadFromClusterSucceed, corev1.EventTypeNormal, "cluster " + names[0]},
	})
	// Two bindings were on the member: the Deployment's and the ConfigMap's.
	testkit.Eventually(t, deadline, "both failovers and evictions counted", func() (bool, string) {
		f, e := testutil.ToFloat64(failovers)-failoversBefore, testutil.ToFloat64(evictions)-evictionsBefore
		return f == 2 && e == 2, fmt.Sprintf("flotilla_failovers_total{type=cluster,member_cluster=%s} moved by %v, flotilla_evictions_total by %v, want 2 each", names[0], f, e)
	})
}

// waitEvents waits until every wanted event is on the host, in any
// namespace (a cluster-scoped object's events are in default).
func waitEvents(t *testing.T, hub client.Client, want []eventWant) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%d events", len(want)), func() (bool, string) {
		var list eventsv1.EventList
		if err := hub.List(t.Context(), &list); err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, w := range want {
			found := false
			for _, e := range list.Items {
				if e.Regarding.Kind == w.kind && (w.name == "" || e.Regarding.Name == w.name) && e.Reason == w.reason &&
					e.Type == w.eventType && strings.Contains(e.Note, w.note) && e.ReportingController != "" && e.Action != "" {
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, fmt.Sprintf("%s %s %s %q", w.kind, w.name, w.reason, w.note))
			}
		}
		if len(missing) == 0 {
			return true, ""
		}
		var seen []string
		for _, e := range list.Items {
			seen = append(seen, fmt.Sprintf("%s/%s %s: %s", e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note))
		}
		return false, fmt.Sprintf("missing %q; seen %q", missing, seen)
	})
}

// TestApplicationFailoverEvents turns the template unhealthy on its only
// cluster while the member stays Ready: the binding and the template get
// an ApplicationFailover event and flotilla_failovers_total{type=application}
// moves by one.
func TestApplicationFailoverEvents(t *testing.T) {
	env := startControlPlane(t)
	hub, names := env.hub, env.names
	primary, backup := names[0], names[1]
	primaryHealthy, backupHealthy := &atomic.Bool{}, &atomic.Bool{}
	primaryHealthy.Store(true)
	backupHealthy.Store(true)
	playDeploymentController(t, env.members[primary], primaryHealthy)
	playDeploymentController(t, env.members[backup], backupHealthy)
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
	testkit.MustCreate(t, hub, deployment(2))
	waitReplicas(t, env.members, map[string]int32{primary: 2})
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	testkit.Eventually(t, deadline, "the primary reports Healthy", func() (bool, string) {
		var rb workv1.ResourceBinding
		if err := hub.Get(t.Context(), rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return healthOf(&rb, primary) == api.ResourceHealthy, fmt.Sprintf("status %+v", rb.Status.AggregatedStatus)
	})
	failovers := metrics.Failovers.WithLabelValues(metrics.FailoverApplication, primary)
	before := testutil.ToFloat64(failovers)
	primaryHealthy.Store(false)
	note := "left cluster " + primary + ", where the template stayed unhealthy"
	waitEvents(t, hub, []eventWant{
		{"ResourceBinding", rbKey.Name, shared.EventReasonApplicationFailover, corev1.EventTypeWarning, note},
		{"Deployment", "web", shared.EventReasonApplicationFailover, corev1.EventTypeWarning, note},
	})
	if got := testutil.ToFloat64(failovers) - before; got != 1 {
		t.Errorf("flotilla_failovers_total{type=application,member_cluster=%s} moved by %v, want 1", primary, got)
	}
}
