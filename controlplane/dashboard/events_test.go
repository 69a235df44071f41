package dashboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// TestWatchedEventsAreTheControlPlanes: the reasons the events page asks
// the host for are the ones the reconcilers record.
func TestWatchedEventsAreTheControlPlanes(t *testing.T) {
	want := map[string]bool{
		shared.EventReasonClusterFailover: true, shared.EventReasonApplicationFailover: true,
		shared.EventReasonEvictWorkloadFromClusterSucceed: true, shared.EventReasonDescheduleBindingSucceed: true,
		shared.EventReasonSyncFailed: true, shared.EventReasonRolloutHalted: true, shared.EventReasonClusterNotReady: true,
	}
	for _, we := range watchedEvents {
		if !want[we.reason] {
			t.Errorf("the dashboard watches reason %q, which no reconciler records", we.reason)
		}
		delete(want, we.reason)
	}
	if len(want) > 0 {
		t.Errorf("reasons not watched: %v", want)
	}
}

func event(ns, name, reason, controller, msg string, involved corev1.ObjectReference, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Reason: reason, ReportingController: controller, Message: msg,
		InvolvedObject: involved, Type: corev1.EventTypeWarning, EventTime: metav1.NewMicroTime(at),
	}
}

func TestClustersOf(t *testing.T) {
	for _, tc := range []struct {
		e    *corev1.Event
		want []string
	}{
		{event("default", "e", "ClusterNotReady", "flotilla-cluster-status", "ClusterNotReachable: x",
			corev1.ObjectReference{APIVersion: "cluster.flotilla.io/v1alpha1", Kind: "Cluster", Name: "east"}, time.Time{}), []string{"east"}},
		{event("flotilla-es-west", "e", "SyncFailed", "flotilla-execution", "Refused: owned by another fleet",
			corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "Work", Namespace: "flotilla-es-west", Name: "w"}, time.Time{}), []string{"west"}},
		{event("a", "e", "ClusterFailover", "flotilla-scheduler", "left cluster m-1.b, which has the untolerated taint t:NoExecute; now on cluster m-2",
			corev1.ObjectReference{Kind: "ResourceBinding", Namespace: "a", Name: "web"}, time.Time{}), []string{"m-1.b", "m-2"}},
		// A cluster.k8s.io Cluster (not flotilla's) is not a member.
		{event("default", "e", "ClusterNotReady", "flotilla-cluster-status", "",
			corev1.ObjectReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Name: "capi"}, time.Time{}), nil},
	} {
		if diff := cmp.Diff(tc.want, clustersOf(tc.e)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.e.Message, diff)
		}
	}
}

// TestBuildEvents: who sees which event, the binding's copy only, the
// filters, conflicts told apart from other failed applies, newest first.
func TestBuildEvents(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rbA := corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "ResourceBinding", Namespace: "team-a", Name: "web-deployment"}
	tmplA := corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: "web"}
	twin := event("team-a", "twin", "ClusterFailover", "flotilla-scheduler", "left cluster east", tmplA, now.Add(-time.Minute))
	twin.Related = &rbA
	events := []*corev1.Event{
		event("team-a", "failover", "ClusterFailover", "flotilla-scheduler", "left cluster east, which has the untolerated taint", rbA, now.Add(-time.Minute)),
		twin,
		event("team-b", "halted", "RolloutHalted", "flotilla-binding", "revision 2: stage canary: cluster west is Unhealthy",
			corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "ResourceBinding", Namespace: "team-b", Name: "api"}, now.Add(-2*time.Minute)),
		event("flotilla-es-west", "conflict", "SyncFailed", "flotilla-execution", "Refused: Deployment team-b/api in cluster west is not flotilla's",
			corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "Work", Namespace: "flotilla-es-west", Name: "api-1"}, now.Add(-3*time.Minute)),
		event("default", "down", "ClusterNotReady", "flotilla-cluster-status", "ClusterNotReachable: refused",
			corev1.ObjectReference{APIVersion: "cluster.flotilla.io/v1alpha1", Kind: "Cluster", Name: "west"}, now.Add(-4*time.Minute)),
		// Stored in team-a but about team-b's binding: the tenant of team-a
		// may not see it (they could not list events where it happened).
		event("team-a", "forged", "RolloutHalted", "flotilla-binding", "about team-b",
			corev1.ObjectReference{APIVersion: "work.flotilla.io/v1alpha1", Kind: "ResourceBinding", Namespace: "team-b", Name: "api"}, now.Add(-5*time.Minute)),
		// Not one the page shows: a reason the page does not watch.
		event("team-a", "other", "ScheduleBindingSucceed", "flotilla-scheduler", "", rbA, now),
	}
	names := func(v eventsView) []string {
		var out []string
		for _, r := range v.Events {
			out = append(out, r.Reason+" "+r.Object)
		}
		return out
	}
	all := func(string) bool { return true }
	v := buildEvents(events, all, "", "", 1, now)
	if diff := cmp.Diff([]string{"ClusterFailover ResourceBinding team-a/web-deployment", "RolloutHalted ResourceBinding team-b/api",
		"SyncFailed Work flotilla-es-west/api-1", "ClusterNotReady Cluster west", "RolloutHalted ResourceBinding team-b/api"}, names(v)); diff != "" || v.Hidden {
		t.Errorf("everyone's view, hidden %v (-want +got):\n%s", v.Hidden, diff)
	}
	if v.Events[0].Link != "/workloads/team-a/web-deployment" || v.Events[0].Age != "1m" || v.Events[2].Class != "conflict" || v.Events[1].Class != "rollout" {
		t.Errorf("rows: %+v", v.Events[:3])
	}
	if diff := cmp.Diff([]string{"east", "west"}, v.Clusters); diff != "" {
		t.Errorf("cluster choices (-want +got):\n%s", diff)
	}
	tenant := func(ns string) bool { return ns == "team-a" }
	v = buildEvents(events, tenant, "", "", 1, now)
	if diff := cmp.Diff([]string{"ClusterFailover ResourceBinding team-a/web-deployment"}, names(v)); diff != "" || !v.Hidden {
		t.Errorf("the tenant of team-a, hidden %v (-want +got):\n%s", v.Hidden, diff)
	}
	if diff := cmp.Diff([]string{"team-a"}, v.Namespaces); diff != "" || len(v.Clusters) != 1 {
		t.Errorf("the tenant's filter choices name others' namespaces or clusters: %v %v", v.Namespaces, v.Clusters)
	}
	v = buildEvents(events, all, "", "west", 1, now)
	if diff := cmp.Diff([]string{"RolloutHalted ResourceBinding team-b/api", "SyncFailed Work flotilla-es-west/api-1", "ClusterNotReady Cluster west"}, names(v)); diff != "" {
		t.Errorf("cluster west (-want +got):\n%s", diff)
	}
	v = buildEvents(events, all, "team-b", "", 1, now)
	if len(v.Events) != 2 {
		t.Errorf("namespace team-b: %v", names(v))
	}
}

// TestBoundedStore: a reflector's store keeps the newest objects up to its
// limit, through a relist (Replace) and single adds alike.
func TestBoundedStore(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(i int) *corev1.Event {
		return event("ns", fmt.Sprintf("e%02d", i), "r", "c", "", corev1.ObjectReference{}, base.Add(time.Duration(i)*time.Second))
	}
	s := newBoundedStore(3, eventTime)
	var list []any
	for i := range 10 {
		list = append(list, ev(i))
	}
	if err := s.Replace(list, "1"); err != nil {
		t.Fatal(err)
	}
	keys := func() []string {
		var out []string
		for _, o := range s.list() {
			out = append(out, o.GetName())
		}
		sortStrings(out)
		return out
	}
	if diff := cmp.Diff([]string{"e07", "e08", "e09"}, keys()); diff != "" || !s.synced() {
		t.Errorf("after a list of 10 (-want +got):\n%s", diff)
	}
	_ = s.Add(ev(12))
	_ = s.Update(ev(8))
	if diff := cmp.Diff([]string{"e08", "e09", "e12"}, keys()); diff != "" {
		t.Errorf("after an add (-want +got):\n%s", diff)
	}
	_ = s.Delete(ev(9))
	if diff := cmp.Diff([]string{"e08", "e12"}, keys()); diff != "" {
		t.Errorf("after a delete (-want +got):\n%s", diff)
	}
}

// TestWorkloadsLabelSelector: a selector over the bindings' labels.
func TestWorkloadsLabelSelector(t *testing.T) {
	mk := func(name string, l map[string]string) workv1.ResourceBinding {
		rb := workv1.ResourceBinding{}
		rb.Namespace, rb.Name, rb.Labels = "a", name, l
		return rb
	}
	bindings := []workv1.ResourceBinding{mk("web", map[string]string{"tier": "front"}), mk("db", map[string]string{"tier": "back"}), mk("x", nil)}
	all := func(string) bool { return true }
	for _, tc := range []struct {
		selector string
		want     []string
	}{
		{"", []string{"db", "web", "x"}},
		{"tier=front", []string{"web"}},
		{"tier in (front,back)", []string{"db", "web"}},
		{"!tier", []string{"x"}},
	} {
		sel, err := labels.Parse(tc.selector)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		match := func(rb *workv1.ResourceBinding) bool { return sel.Matches(labels.Set(rb.Labels)) }
		for _, w := range buildWorkloads(bindings, all, nil, "", "", match, 1).Workloads {
			got = append(got, w.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.selector, diff)
		}
	}
}
