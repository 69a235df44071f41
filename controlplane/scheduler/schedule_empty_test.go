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

// TestScheduleZeroReplicas follows Karmada's AssignReplicas
// (pkg/scheduler/core/common.go) with its default
// --enable-empty-workload-propagation=false: a zero-replica template with
// replica requirements is assigned like a workload and every cluster, holding
// zero replicas, is removed (removeZeroReplicasCluster), whatever the
// strategy; one without requirements goes to every selected cluster.
func TestScheduleZeroReplicas(t *testing.T) {
	m1to3 := clusters(apitest.MakeCluster("m1"), apitest.MakeCluster("m2"), apitest.MakeCluster("m3"))
	cpu := &api.ReplicaRequirements{Namespace: "default",
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	tolerates := &api.ReplicaRequirements{Namespace: "default",
		NodeClaim: &api.NodeClaim{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}}
	// What flotilla's interpreter gives a pod template without requests or
	// node constraints: Karmada's GenerateReplicaRequirements returns nil.
	bare := &api.ReplicaRequirements{Namespace: "default", PriorityClassName: "high"}
	zeroCPU := &api.ReplicaRequirements{Namespace: "default",
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}}
	with := func(b scheduler.Binding, req *api.ReplicaRequirements) scheduler.Binding {
		b.ReplicaRequirements = req
		return b
	}
	all := []api.TargetCluster{tc("m1", 0), tc("m2", 0), tc("m3", 0)}
	weights := placement(policy().Weight(2, "m1").Weight(1, "m2", "m3"))

	cases := []struct {
		name    string
		binding scheduler.Binding
		want    []api.TargetCluster
	}{
		{"requests, Duplicated: no cluster", with(workload(0, api.Placement{}), cpu), nil},
		{"requests, static weights: no cluster", with(workload(0, weights), cpu), nil},
		{"requests, dynamic weight: no cluster", with(workload(0, placement(policy().DynamicWeight())), cpu), nil},
		{"requests, Aggregated: no cluster",
			with(workload(0, placement(policy().Divided(api.ReplicaDivisionPreferenceAggregated))), cpu), nil},
		{"requests, scaled down from a previous split: no cluster",
			with(workload(0, placement(policy().DynamicWeight()), tc("m1", 2), tc("m2", 1)), cpu), nil},
		{"node claim only: no cluster", with(workload(0, api.Placement{}), tolerates), nil},
		{"no requirements: every cluster with zero", with(workload(0, api.Placement{}), nil), all},
		{"namespace and priority class only: every cluster with zero", with(workload(0, weights), bare), all},
		{"zero request: every cluster with zero", with(workload(0, api.Placement{}), zeroCPU), all},
		{"requests, one replica: scheduled as usual", with(workload(1, api.Placement{}), cpu),
			[]api.TargetCluster{tc("m1", 1), tc("m2", 1), tc("m3", 1)}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scheduler.Schedule(m1to3, tt.binding)
			if err != nil {
				t.Fatalf("Schedule: %v", err)
			}
			if diff := cmp.Diff(tt.want, res.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}
