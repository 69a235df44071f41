package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

const gpu corev1.ResourceName = "nvidia.com/gpu"

// request builds per-replica requirements from name, quantity pairs.
func request(pairs ...string) *api.ReplicaRequirements {
	rl := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		rl[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return &api.ReplicaRequirements{ResourceRequest: rl}
}

func TestAvailableReplicas(t *testing.T) {
	node := func() *apitest.ClusterWrapper {
		return apitest.MakeCluster("c").
			Allocatable(corev1.ResourcePods, "110").
			Allocatable(corev1.ResourceCPU, "4").
			Allocatable(corev1.ResourceMemory, "8Gi").
			Allocatable(corev1.ResourceEphemeralStorage, "100Gi")
	}
	// Three grades of nodes: small, medium, large.
	modeled := func() *apitest.ClusterWrapper {
		return node().
			ResourceModel(0, "cpu", "0", "1", "memory", "0", "4Gi").
			ResourceModel(1, "cpu", "1", "2", "memory", "4Gi", "16Gi").
			ResourceModel(2, "cpu", "2", "4", "memory", "16Gi", "32Gi").
			Modeling(0, 10).Modeling(1, 3).Modeling(2, 2)
	}
	cases := []struct {
		name    string
		cluster *api.Cluster
		req     *api.ReplicaRequirements
		want    int32
	}{
		{"no resource summary", apitest.MakeCluster("c").Obj(), request("cpu", "1"), 0},
		{"no request: free pod slots",
			node().Allocated(corev1.ResourcePods, "100").Allocating(corev1.ResourcePods, "4").Obj(), nil, 6},
		{"pods exhausted", node().Allocated(corev1.ResourcePods, "120").Obj(), nil, 0},
		{"cpu in millicores: (4000-1000-500)/250",
			node().Allocated(corev1.ResourceCPU, "1").Allocating(corev1.ResourceCPU, "500m").Obj(),
			request("cpu", "250m"), 10},
		{"memory", node().Allocated(corev1.ResourceMemory, "2Gi").Obj(), request("memory", "1Gi"), 6},
		{"ephemeral storage", node().Obj(), request("ephemeral-storage", "30Gi"), 3},
		{"smallest quotient wins", node().Obj(), request("cpu", "1", "memory", "1Gi"), 4},
		{"bounded by pods",
			node().Allocatable(corev1.ResourcePods, "5").Allocated(corev1.ResourcePods, "2").Obj(),
			request("cpu", "100m"), 3},
		{"requested resource missing from allocatable", node().Obj(), request(string(gpu), "1"), 0},
		{"extended resource",
			node().Allocatable(gpu, "4").Allocated(gpu, "1").Obj(), request(string(gpu), "1"), 3},
		{"over-allocated", node().Allocated(corev1.ResourceCPU, "5").Obj(), request("cpu", "1"), 0},
		{"zero requests are ignored", node().Obj(), request("cpu", "0"), 110},
		{"resource models: 3 medium nodes hold 1, 2 large nodes hold 2",
			modeled().Obj(), request("cpu", "1", "memory", "2Gi"), 7},
		{"resource models: nothing is large enough", modeled().Obj(), request("cpu", "100"), 0},
		{"resource models still bounded by pods",
			modeled().Allocatable(corev1.ResourcePods, "4").Obj(), request("cpu", "1", "memory", "2Gi"), 4},
		{"resource models without the requested resource: their virtual nodes hold none (Karmada's simulator)",
			modeled().Allocatable(gpu, "2").Obj(), request("cpu", "1", string(gpu), "1"), 0},
		{"resource models: at most 110 per model node",
			modeled().Allocatable(corev1.ResourcePods, "1000").Obj(), request("cpu", "1m"), 5 * 110},
		{"resource models: the lowest grade holds nothing, whatever its declared lower bounds",
			node().ResourceModel(0, "cpu", "2", "4").ResourceModel(1, "cpu", "4", "8").Modeling(0, 5).Modeling(1, 1).Obj(), request("cpu", "1"), 4},
		{"modelings without declared models: the summary decides (the default models grade the status only), so 3 grade-0 nodes do not make it 0",
			node().Modeling(0, 3).Obj(), request("cpu", "1"), 4},
		{"modelings without declared models: the summary decides, so a resource the default models do not bound is not refused",
			node().Allocatable(corev1.ResourcePods, "110").Modeling(0, 3).Modeling(6, 2).Obj(), request("cpu", "1", "memory", "2Gi"), 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := AvailableReplicas(tc.cluster, tc.req); got != tc.want {
				t.Errorf("AvailableReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}
