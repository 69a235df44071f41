package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// randomFleet builds n clusters whose resource summaries cover every case
// the estimator distinguishes: no summary, missing or over-committed
// resources, cpu in millicores, memory in odd units, an extended resource,
// and resource models with modelings; now and then a cluster lacks a
// region, a zone, a provider or its "rack" label.
func randomFleet(r *rand.Rand, n int) []*api.Cluster {
	out := make([]*api.Cluster, n)
	for i := range n {
		region := "region-" + strconv.Itoa(r.IntN(4))
		w := apitest.MakeCluster(fmt.Sprintf("c%04d", i)).Ready()
		// Now and then a cluster lacks a field spread constraints group by.
		if r.IntN(15) != 0 {
			w.Region(region)
		}
		if r.IntN(15) != 0 {
			w.Zones(region + "-a")
		}
		if r.IntN(15) != 0 {
			w.Provider([]string{"aws", "gcp"}[r.IntN(2)])
		}
		if r.IntN(8) != 0 {
			w.Label("rack", "rack-"+strconv.Itoa(r.IntN(6)))
		}
		switch r.IntN(6) {
		case 0:
			// Nothing collected.
		case 1:
			w.APIs("apps/v1/StatefulSet")
		case 2:
			w.APIs("apps/v1/Deployment").PartialAPIs()
		case 3:
			w.APIs("apps/v1/StatefulSet").PartialAPIs()
		default:
			w.APIs("apps/v1/Deployment", "apps/v1/StatefulSet")
		}
		if r.IntN(25) == 0 {
			w.Deleting()
		}
		if r.IntN(10) != 0 {
			w.Label("tier", "gold")
		}
		if r.IntN(12) != 0 {
			if r.IntN(8) != 0 {
				w.Allocatable(corev1.ResourcePods, strconv.Itoa(r.IntN(300)))
			}
			if r.IntN(3) != 0 {
				w.Allocated(corev1.ResourcePods, strconv.Itoa(r.IntN(200)))
			}
			if r.IntN(6) != 0 {
				w.Allocatable(corev1.ResourceCPU, strconv.Itoa(r.IntN(64000))+"m")
			}
			if r.IntN(2) != 0 {
				w.Allocated(corev1.ResourceCPU, strconv.Itoa(r.IntN(40000))+"m").
					Allocating(corev1.ResourceCPU, strconv.Itoa(r.IntN(2000))+"m")
			}
			if r.IntN(6) != 0 {
				w.Allocatable(corev1.ResourceMemory, strconv.Itoa(r.IntN(512))+"Gi")
			}
			if r.IntN(2) != 0 {
				w.Allocated(corev1.ResourceMemory, strconv.Itoa(r.IntN(400000))+"M")
			}
			if r.IntN(3) == 0 {
				w.Allocatable("nvidia.com/gpu", strconv.Itoa(r.IntN(16))).
					Allocated("nvidia.com/gpu", strconv.Itoa(r.IntN(8)))
			}
			if r.IntN(5) == 0 {
				w.ResourceModel(0, "cpu", "0", "4", "memory", "0", "16Gi").
					ResourceModel(1, "cpu", "4", "16", "memory", "16Gi", "64Gi").
					Modeling(0, r.IntN(20)).Modeling(1, r.IntN(10))
			}
		}
		if r.IntN(20) == 0 {
			w.Taint("dedicated", "batch", corev1.TaintEffectNoSchedule)
		}
		out[i] = w.Obj()
	}
	return out
}

// randomRequest is one replica's request: nothing, cpu, cpu and memory, or
// a GPU as well.
func randomRequest(r *rand.Rand) *api.ReplicaRequirements {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(strconv.Itoa(1+r.IntN(2000)) + "m")}}
	case 2:
		return &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(strconv.Itoa(1+r.IntN(2000)) + "m"),
			corev1.ResourceMemory: resource.MustParse(strconv.Itoa(1+r.IntN(4096)) + "Mi")}}
	}
	return &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("500m"),
		corev1.ResourceMemory: resource.MustParse("1Gi"),
		"nvidia.com/gpu":      resource.MustParse("1")}}
}

// sameDecision fails unless the Snapshot of clusters decides exactly as
// Schedule does.
func sameDecision(t *testing.T, label string, clusters []*api.Cluster, snapshot *scheduler.Snapshot, b scheduler.Binding) {
	t.Helper()
	want, wantErr := scheduler.Schedule(clusters, b)
	got, gotErr := snapshot.Schedule(b)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%s: Snapshot.Schedule error\n%v\nSchedule error\n%v", label, gotErr, wantErr)
	}
	if diff := cmp.Diff(viewOf(want), viewOf(got)); diff != "" {
		t.Fatalf("%s: Snapshot.Schedule differs from Schedule (-Schedule +Snapshot):\n%s", label, diff)
	}
}

// TestSnapshotScheduleMatchesSchedule checks, on randomized fleets and
// bindings, that scheduling from a Snapshot's precomputed free resources
// gives the same result, reasons and errors as Schedule. Each fleet's
// Snapshot serves bindings of two kinds, so its per-kind API cache is
// reused and kept apart.
func TestSnapshotScheduleMatchesSchedule(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5000))
	placements := issuePlacements()
	// Affinities of other shapes, so one Snapshot's affinity cache serves
	// several and must keep them apart.
	for _, a := range []*api.ClusterAffinity{
		apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn, "region-1", "region-2").Obj(),
		apitest.MakeAffinity().Label("tier", "gold").Exclude("c0001", "c0003").Obj(),
		apitest.MakeAffinity().Names("c0000", "c0002", "c0004", "c0005").Obj(),
		apitest.MakeAffinity().LabelExpression("tier", metav1.LabelSelectorOpDoesNotExist).Obj(),
	} {
		placements = append(placements, struct {
			name string
			p    api.Placement
		}{fmt.Sprintf("affinity %+v", *a), placement(policy().Affinity(a).DynamicWeight())})
	}
	placements = append(placements, struct {
		name string
		p    api.Placement
	}{"zone and provider spreads", placement(policy().DynamicWeight().
		Spread(api.SpreadByFieldZone, 1, 0).Spread(api.SpreadByFieldProvider, 1, 2))})
	placements = append(placements, struct {
		name string
		p    api.Placement
	}{"rack spread", placement(policy().DynamicWeight().
		SpreadByLabel("rack", 2, 4).Spread(api.SpreadByFieldCluster, 2, 8))})
	for round := range 60 {
		clusters := randomFleet(r, 1+r.IntN(120))
		snapshot := scheduler.NewSnapshot(clusters)
		for _, kind := range []string{"Deployment", "StatefulSet", "Deployment"} {
			for _, bp := range placements {
				b := workload(int32(r.IntN(3000)), bp.p)
				b.Resource.Kind = kind
				b.ReplicaRequirements = randomRequest(r)
				if r.IntN(4) == 0 {
					b.Previous = []api.TargetCluster{{Name: clusters[r.IntN(len(clusters))].Name, Replicas: 3}}
				}
				sameDecision(t, fmt.Sprintf("round %d, %s %s", round, kind, bp.name), clusters, snapshot, b)
			}
		}
	}
	// The fuzz scenarios cover affinity terms, previous results,
	// tolerations and validated odd placements.
	for round := range 2000 {
		data := make([]byte, 24+r.IntN(64))
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		if clusters, b, ok := fuzzScenario(data); ok {
			sameDecision(t, fmt.Sprintf("fuzz scenario %d %v", round, data), clusters, scheduler.NewSnapshot(clusters), b)
		}
	}
}
