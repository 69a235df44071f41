package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// perNode answers per-node estimates from a table; a cluster missing from
// it has none.
func perNode(fits map[string]int32) scheduler.NodeEstimator {
	return func(*api.ReplicaRequirements) func(string) (int32, bool) {
		return func(name string) (int32, bool) {
			n, ok := fits[name]
			return n, ok
		}
	}
}

// TestScheduleNodeEstimates attacks the minimum of the two estimators: a
// cluster whose summary has room for many but whose nodes hold few gets
// only what its nodes hold; a cluster without per-node figures keeps the
// general estimate; Duplicated and static weights ignore both.
func TestScheduleNodeEstimates(t *testing.T) {
	fleet := []*api.Cluster{room("east", 6), room("west", 6)}
	dynamic := placement(policy().DynamicWeight())
	aggregated := placement(policy().Divided(api.ReplicaDivisionPreferenceAggregated))
	with := func(b scheduler.Binding, fits map[string]int32) scheduler.Binding {
		b.NodeEstimates = perNode(fits)
		return b
	}
	cases := []struct {
		name    string
		binding scheduler.Binding
		want    []api.TargetCluster
	}{
		{"general estimator alone: 6 and 6 split evenly", workload(6, dynamic), []api.TargetCluster{tc("east", 3), tc("west", 3)}},
		{"west's nodes hold 1: dynamic weight follows 6:1", with(workload(7, dynamic), map[string]int32{"east": 6, "west": 1}),
			[]api.TargetCluster{tc("east", 6), tc("west", 1)}},
		{"per-node above the summary: the summary bounds", with(workload(6, dynamic), map[string]int32{"east": 100, "west": 100}),
			[]api.TargetCluster{tc("east", 3), tc("west", 3)}},
		{"a cluster without per-node figures keeps the general estimate", with(workload(7, dynamic), map[string]int32{"west": 1}),
			[]api.TargetCluster{tc("east", 6), tc("west", 1)}},
		{"Aggregated packs into the cluster whose nodes hold enough", with(workload(4, aggregated), map[string]int32{"east": 3, "west": 5}),
			[]api.TargetCluster{tc("west", 4)}},
		{"Duplicated ignores estimates", with(workload(4, api.Placement{}), map[string]int32{"east": 0, "west": 0}),
			[]api.TargetCluster{tc("east", 4), tc("west", 4)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, decide := range []func(scheduler.Binding) (scheduler.Result, error){
				func(b scheduler.Binding) (scheduler.Result, error) { return scheduler.Schedule(fleet, b) },
				scheduler.NewSnapshot(fleet).Schedule,
			} {
				res, err := decide(c.binding)
				if err != nil {
					t.Fatalf("Schedule: %v", err)
				}
				if diff := cmp.Diff(c.want, res.Clusters); diff != "" {
					t.Errorf("clusters (-want +got):\n%s", diff)
				}
			}
		})
	}
	t.Run("the clusters the nodes limited are named with both figures", func(t *testing.T) {
		res, err := scheduler.Schedule(fleet, with(workload(7, dynamic), map[string]int32{"east": 100, "west": 1}))
		if err != nil {
			t.Fatal(err)
		}
		want := []scheduler.NodeLimit{{Cluster: "west", PerNode: 1, ClusterWide: 6}}
		if diff := cmp.Diff(want, res.NodeLimited); diff != "" {
			t.Errorf("NodeLimited (-want +got):\n%s", diff)
		}
		if got, want := res.NodeLimited[0].String(), "per-node fit: room for 1; cluster-wide free would allow 6"; got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
		if res, _ := scheduler.Schedule(fleet, workload(6, dynamic)); res.NodeLimited != nil {
			t.Errorf("NodeLimited without per-node estimates: %v", res.NodeLimited)
		}
	})
	t.Run("resource models that hold fewer than the summary are a per-node limit", func(t *testing.T) {
		// frag: 6 cores free in sum, its models count 3 nodes with 1 to 2
		// free cores; roomy: 3 free, no models.
		frag := apitest.MakeCluster("frag").Allocatable(corev1.ResourceCPU, "6").Allocatable(corev1.ResourcePods, "110").Obj()
		frag.Spec.ResourceModels = []api.ResourceModel{
			{Grade: 0, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("1")}}},
			{Grade: 1, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("1"), Max: resource.MustParse("2")}}},
		}
		frag.Status.ResourceSummary.AllocatableModelings = []api.AllocatableModeling{{Grade: 0, Count: 1}, {Grade: 1, Count: 3}}
		roomy := apitest.MakeCluster("roomy").Allocatable(corev1.ResourceCPU, "3").Allocatable(corev1.ResourcePods, "110").Obj()
		b := workload(6, dynamic)
		b.ReplicaRequirements = &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		for _, c := range []struct {
			name     string
			replicas int32
			fits     map[string]int32
			want     []scheduler.NodeLimit
			text     string
		}{
			{"models alone", 6, nil, []scheduler.NodeLimit{{Cluster: "frag", PerNode: 3, ClusterWide: 6, Models: true}},
				"per-node fit by resource models: room for 3; cluster-wide free would allow 6"},
			{"nodes read below the models", 5, map[string]int32{"frag": 2, "roomy": 3}, []scheduler.NodeLimit{{Cluster: "frag", PerNode: 2, ClusterWide: 6}},
				"per-node fit: room for 2; cluster-wide free would allow 6"},
		} {
			b := b
			b.Replicas = c.replicas
			if c.fits != nil {
				b.NodeEstimates = perNode(c.fits)
			}
			res, err := scheduler.Schedule([]*api.Cluster{frag, roomy}, b)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if diff := cmp.Diff(c.want, res.NodeLimited); diff != "" {
				t.Errorf("%s: NodeLimited (-want +got):\n%s", c.name, diff)
			} else if got := res.NodeLimited[0].String(); got != c.text {
				t.Errorf("%s: String() = %q, want %q", c.name, got, c.text)
			}
		}
	})
	t.Run("nodes that hold none leave the template unschedulable", func(t *testing.T) {
		if _, err := scheduler.Schedule(fleet, with(workload(2, dynamic), map[string]int32{"east": 0, "west": 0})); err == nil {
			t.Fatal("scheduled replicas no node can start")
		}
	})
}
