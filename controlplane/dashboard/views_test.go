package dashboard

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

func TestCapacity(t *testing.T) {
	s := &api.ResourceSummary{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
		Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("100")},
		Allocating:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourcePods: resource.MustParse("20")},
	}
	for _, tc := range []struct {
		name corev1.ResourceName
		want capacity
	}{
		{corev1.ResourceCPU, capacity{Name: "cpu", Used: "2", Total: "8", Free: "6", Percent: 25}},
		{corev1.ResourceMemory, capacity{Name: "memory", Used: "16.0Gi", Total: "64.0Gi", Free: "48.0Gi", Percent: 25}},
		// Pending pods may ask for more than there is: never below 0 free nor above 100%.
		{corev1.ResourcePods, capacity{Name: "pods", Used: "120", Total: "110", Free: "0", Percent: 100}},
	} {
		got, ok := capacityOf(s, tc.name)
		if !ok {
			t.Fatalf("%s: not reported", tc.name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, ok := capacityOf(s, corev1.ResourceEphemeralStorage); ok {
		t.Error("a resource with no allocatable amount is reported")
	}
}

func TestPlacementAndHealth(t *testing.T) {
	palette := map[string]string{"a": "c0", "b": "c1"}
	divided := &workv1.ResourceBinding{Spec: api.ResourceBindingSpec{Clusters: []api.TargetCluster{{Name: "a", Replicas: 3}, {Name: "b", Replicas: 1}}}}
	segs, label := placementOf(divided, palette)
	want := []segment{{Cluster: "a", Replicas: 3, Offset: 0, Percent: 75, Color: "c0"}, {Cluster: "b", Replicas: 1, Offset: 75, Percent: 25, Color: "c1"}}
	if diff := cmp.Diff(want, segs); diff != "" || label != "a 3, b 1" {
		t.Errorf("divided: label %q, segments (-want +got):\n%s", label, diff)
	}
	duplicated := &workv1.ResourceBinding{Spec: api.ResourceBindingSpec{Clusters: []api.TargetCluster{{Name: "a"}, {Name: "b"}}}}
	if segs, label := placementOf(duplicated, palette); segs[1].Offset != 50 || segs[1].Percent != 50 || label != "a, b" {
		t.Errorf("duplicated: %+v %q, want equal halves", segs, label)
	}
	if _, label := placementOf(&workv1.ResourceBinding{}, palette); label != "not placed" {
		t.Errorf("unplaced: %q", label)
	}
	for _, tc := range []struct {
		reports []api.ResourceHealth
		want    string
		healthy int
	}{
		{[]api.ResourceHealth{api.ResourceHealthy, api.ResourceHealthy}, "Healthy", 2},
		{[]api.ResourceHealth{api.ResourceHealthy, api.ResourceUnhealthy}, "Unhealthy", 1},
		// A placed cluster that has not reported yet.
		{[]api.ResourceHealth{api.ResourceHealthy}, "Progressing", 1},
	} {
		rb := divided.DeepCopy()
		for i, h := range tc.reports {
			rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, api.AggregatedStatusItem{ClusterName: rb.Spec.Clusters[i].Name, Health: h})
		}
		if got, healthy, placed := healthOf(rb); got != tc.want || healthy != tc.healthy || placed != 2 {
			t.Errorf("%v: %s %d/%d, want %s %d/2", tc.reports, got, healthy, placed, tc.want, tc.healthy)
		}
	}
}

func TestFleetOrderFilterAndPages(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var clusters []clusterv1.Cluster
	for i := range 120 {
		status := metav1.ConditionTrue
		if i == 7 || i == 100 {
			status = metav1.ConditionFalse
		}
		clusters = append(clusters, clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "m" + string(rune('a'+i/26)) + string(rune('a'+i%26))},
			Status: api.ClusterStatus{Conditions: []metav1.Condition{{Type: api.ClusterConditionReady, Status: status,
				Reason: "R", LastTransitionTime: metav1.NewTime(now.Add(-90 * time.Second))}}},
		})
	}
	v := buildFleet(clusters, "", 1, now, heartbeats{})
	if v.Total != 120 || v.Ready != 118 || v.Page.Pages != 3 || len(v.Clusters) != pageSize {
		t.Fatalf("total %d ready %d pages %d rows %d", v.Total, v.Ready, v.Page.Pages, len(v.Clusters))
	}
	if v.Clusters[0].State != "NotReady" || v.Clusters[1].State != "NotReady" || v.Clusters[2].State != "Ready" || v.Clusters[0].Since != "1m" {
		t.Errorf("not-ready clusters are not first: %+v", v.Clusters[:3])
	}
	last := buildFleet(clusters, "", 99, now, heartbeats{})
	if last.Page.Number != 3 || len(last.Clusters) != 20 || last.Page.Next() != 0 || last.Page.Prev() != 2 {
		t.Errorf("a page past the end: number %d, rows %d", last.Page.Number, len(last.Clusters))
	}
	if f := buildFleet(clusters, "mb", 1, now, heartbeats{}); f.Page.Total != 26 || f.Total != 120 {
		t.Errorf("filter mb: %d shown of %d, want 26 of 120", f.Page.Total, f.Total)
	}
}

func sortStrings(s []string) { sort.Strings(s) }

func TestFleetHeartbeat(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	push := clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "push"}}
	pull := clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "pull"}, Spec: api.ClusterSpec{SyncMode: api.Pull}}
	times := func(m map[string]*time.Time) func(string) *time.Time {
		return func(c string) *time.Time { return m[c] }
	}
	for _, tc := range []struct {
		name       string
		hb         heartbeats
		push, pull string
		pushTime   string
	}{
		// The leader probed the Push cluster 7s ago; the Pull cluster's
		// agent renewed its Lease 12s ago.
		{"leader", heartbeats{renewed: times(map[string]*time.Time{"pull": at(12 * time.Second)}), probed: times(map[string]*time.Time{"push": at(7 * time.Second)}), leading: true},
			"7s ago", "12s ago", "2026-01-01T11:59:53Z"},
		// Only the Lease is on the host: a standby knows no probe time.
		{"standby", heartbeats{renewed: times(map[string]*time.Time{"pull": at(3 * time.Minute)})}, "probed by the leader", "3m ago", ""},
		{"leader before a successful probe", heartbeats{probed: times(nil), leading: true}, "no successful probe yet", "no Lease renewal", ""},
	} {
		v := buildFleet([]clusterv1.Cluster{push, pull}, "", 1, now, tc.hb)
		rows := map[string]clusterRow{}
		for _, r := range v.Clusters {
			rows[r.Name] = r
		}
		if got := rows["push"]; got.Heartbeat != tc.push || got.HeartbeatTime != tc.pushTime {
			t.Errorf("%s: Push heartbeat %q (%q), want %q (%q)", tc.name, got.Heartbeat, got.HeartbeatTime, tc.push, tc.pushTime)
		}
		if got := rows["pull"].Heartbeat; got != tc.pull {
			t.Errorf("%s: Pull heartbeat %q, want %q", tc.name, got, tc.pull)
		}
	}
}

func TestRolloutGateTimers(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	secs := func(n int32) *int32 { return &n }
	strategy := &api.RolloutStrategy{Stages: []api.RolloutStage{
		{Name: "canary", Gate: &api.RolloutGate{BakeSeconds: 120, TimeoutSeconds: secs(300)}},
		{Name: "wave", Gate: &api.RolloutGate{BakeSeconds: 90}},
	}}
	binding := func(name string, ro api.BindingRolloutStatus) workv1.ResourceBinding {
		return workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: api.ResourceBindingStatus{Rollout: &ro}}
	}
	bindings := []workv1.ResourceBinding{
		binding("baking", api.BindingRolloutStatus{Phase: api.BindingRolloutBaking, Stage: "canary", BatchStartTime: ago(time.Minute), HealthySince: ago(40 * time.Second)}),
		binding("waiting", api.BindingRolloutStatus{Phase: api.BindingRolloutProgressing, Stage: "canary", BatchStartTime: ago(2 * time.Minute)}),
		binding("overdue", api.BindingRolloutStatus{Phase: api.BindingRolloutProgressing, Stage: "canary", BatchStartTime: ago(6 * time.Minute)}),
		binding("second", api.BindingRolloutStatus{Phase: api.BindingRolloutBaking, Stage: "wave", StageIndex: 1, HealthySince: ago(30 * time.Second)}),
		// The implicit last stage has the default gate: no bake, 600s.
		binding("rest", api.BindingRolloutStatus{Phase: api.BindingRolloutProgressing, Stage: api.RemainingStageName, StageIndex: 2, BatchStartTime: ago(time.Minute)}),
		// The policy's stages no longer match the status: no timer is made up.
		binding("stale", api.BindingRolloutStatus{Phase: api.BindingRolloutBaking, Stage: "gone", HealthySince: ago(30 * time.Second)}),
		binding("halted", api.BindingRolloutStatus{Phase: api.BindingRolloutHalted, Stage: "canary", Reason: api.RolloutReasonGateTimedOut, BatchStartTime: ago(time.Hour)}),
	}
	gate := func(rb *workv1.ResourceBinding) (*api.RolloutGate, bool) {
		return stageGate(strategy, rb.Status.Rollout)
	}
	want := map[string]string{
		"baking":  "healthy 40s of 2m bake",
		"waiting": "not healthy yet; times out in 3m (timeout 5m)",
		"overdue": "not healthy; timeout 5m ran out",
		"second":  "healthy 30s of 1m30s bake",
		"rest":    "not healthy yet; times out in 9m (timeout 10m)",
		"stale":   "30s",
		"halted":  "",
	}
	all := func(string) bool { return true }
	for _, r := range buildRollouts(bindings, all, "", 1, now, gate).Rollouts {
		if r.Baking != want[r.Name] {
			t.Errorf("%s: gate timer %q, want %q", r.Name, r.Baking, want[r.Name])
		}
	}
	// Without the policy (the user may not read it) only the age shows.
	for _, r := range buildRollouts(bindings, all, "", 1, now, nil).Rollouts {
		if r.Name == "baking" && r.Baking != "40s" {
			t.Errorf("without the gate: %q, want the age 40s", r.Baking)
		}
	}
}
