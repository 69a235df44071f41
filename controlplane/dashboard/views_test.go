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
	v := buildFleet(clusters, "", 1, now, nil)
	if v.Total != 120 || v.Ready != 118 || v.Page.Pages != 3 || len(v.Clusters) != pageSize {
		t.Fatalf("total %d ready %d pages %d rows %d", v.Total, v.Ready, v.Page.Pages, len(v.Clusters))
	}
	if v.Clusters[0].State != "NotReady" || v.Clusters[1].State != "NotReady" || v.Clusters[2].State != "Ready" || v.Clusters[0].Since != "1m" {
		t.Errorf("not-ready clusters are not first: %+v", v.Clusters[:3])
	}
	last := buildFleet(clusters, "", 99, now, nil)
	if last.Page.Number != 3 || len(last.Clusters) != 20 || last.Page.Next() != 0 || last.Page.Prev() != 2 {
		t.Errorf("a page past the end: number %d, rows %d", last.Page.Number, len(last.Clusters))
	}
	if f := buildFleet(clusters, "mb", 1, now, nil); f.Page.Total != 26 || f.Total != 120 {
		t.Errorf("filter mb: %d shown of %d, want 26 of 120", f.Page.Total, f.Total)
	}
}

func fleetOf(names ...string) []clusterv1.Cluster {
	var out []clusterv1.Cluster
	for _, n := range names {
		out = append(out, clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }
