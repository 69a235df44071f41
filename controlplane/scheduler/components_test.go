package scheduler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// flinkJob is a FlinkDeployment-shaped binding: one JobManager (1 cpu,
// 2Gi) and four TaskManagers (2 cpu, 4Gi each), so one complete set needs
// 5 pods, 9 cpu and 18Gi.
func flinkJob(p api.Placement) scheduler.Binding {
	req := func(cpu, mem string) *api.ReplicaRequirements {
		return &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	return scheduler.Binding{
		Resource:  api.ObjectReference{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment", Namespace: "default", Name: "job"},
		Placement: p,
		Components: []api.Component{
			{Name: "jobmanager", Replicas: 1, ReplicaRequirements: req("1", "2Gi")},
			{Name: "taskmanager", Replicas: 4, ReplicaRequirements: req("2", "4Gi")},
		},
	}
}

// jobFleet: only south holds a complete set. east has the cpu of the
// TaskManagers but not their memory, west the memory but one cpu short,
// north everything but pod slots for all five.
func jobFleet() []*api.Cluster {
	c := func(name, cpu, mem, pods string) *apitest.ClusterWrapper {
		return apitest.MakeCluster(name).Allocatable(corev1.ResourceCPU, cpu).Allocatable(corev1.ResourceMemory, mem).Allocatable(corev1.ResourcePods, pods)
	}
	return clusters(
		c("east", "32", "16Gi", "110"),
		c("north", "64", "256Gi", "4"),
		c("south", "10", "20Gi", "110"),
		c("west", "8500m", "256Gi", "110").Allocated(corev1.ResourceCPU, "0"),
	)
}

// TestScheduleComponents follows Karmada's multiple pod templates
// scheduling (isMultiTemplateSchedulingApplicable, the general estimator's
// maxAvailableComponentSets, SelectBestClusters asked for one set,
// AssignReplicas sending the template whole): with a placement of exactly
// one cluster and a strategy that weighs capacity, the job goes to the one
// cluster where all its components fit; otherwise components do not
// decide, as in Karmada.
func TestScheduleComponents(t *testing.T) {
	oneCluster := func(w *apitest.PropagationPolicyWrapper) api.Placement {
		return placement(w.Spread(api.SpreadByFieldCluster, 1, 1))
	}
	cases := []struct {
		name string
		p    api.Placement
		want []api.TargetCluster
	}{
		{"aggregated, one cluster: where every component fits", oneCluster(policy().Divided(api.ReplicaDivisionPreferenceAggregated)),
			[]api.TargetCluster{{Name: "south"}}},
		{"dynamic weight, one cluster: where every component fits", oneCluster(policy().DynamicWeight()),
			[]api.TargetCluster{{Name: "south"}}},
		{"no spread constraint: whole to every cluster, as a non-workload", placement(policy().Divided(api.ReplicaDivisionPreferenceAggregated)),
			[]api.TargetCluster{{Name: "east"}, {Name: "north"}, {Name: "south"}, {Name: "west"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scheduler.Schedule(jobFleet(), flinkJob(tc.p))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}

	// No cluster holds a set: the error says, per cluster, how many sets
	// fit rather than placing the job where it cannot run.
	small := jobFleet()[:2]
	_, err := scheduler.Schedule(small, flinkJob(oneCluster(policy().Divided(api.ReplicaDivisionPreferenceAggregated))))
	var fit *scheduler.FitError
	if !errors.As(err, &fit) {
		t.Fatalf("error %v is not a FitError", err)
	}
	want := map[string]string{
		"east":  "feasible, room for 0 complete sets of its components",
		"north": "feasible, room for 0 complete sets of its components",
	}
	if diff := cmp.Diff(want, fit.Reasons); diff != "" || fit.Stage != scheduler.StageSelect {
		t.Errorf("stage %q, reasons (-want +got):\n%s", fit.Stage, diff)
	}
	if !strings.Contains(fit.Error(), "no enough resource") {
		t.Errorf("error %q does not say the resources fall short", fit.Error())
	}

	// The same through a Snapshot, the path of preview and Terraform with
	// several templates.
	res, err := scheduler.NewSnapshot(jobFleet()).Schedule(flinkJob(oneCluster(policy().DynamicWeight())))
	if err != nil || !cmp.Equal(res.Clusters, []api.TargetCluster{{Name: "south"}}) {
		t.Errorf("snapshot: clusters %v, error %v; want south", res.Clusters, err)
	}
}
