package scheduler_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// benchNodes gives every cluster of clusters ten nodes of 16 cores and
// 64Gi, each running ten pods of 500m and 1Gi, as the member informers
// would keep them.
//
// touch changes every member (a pod goes and comes back), so the next
// decision finds no answer in the members' memo.
func benchNodes(clusters []*api.Cluster) (touch func(), estimate scheduler.NodeEstimator) {
	members := make(map[string]*estimator.Nodes, len(clusters))
	for _, c := range clusters {
		nodes := estimator.NewNodes()
		for i := range 10 {
			name := fmt.Sprintf("%s-node-%d", c.Name, i)
			nodes.SetNode(&corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
				Status: corev1.NodeStatus{
					Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
					Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				},
			})
			for p := range 10 {
				nodes.SetPod(fmt.Sprintf("ns/%s-%d", name, p), name, corev1.PodRunning,
					corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")})
			}
		}
		members[c.Name] = nodes
	}
	touch = func() {
		for name, nodes := range members {
			nodes.DeletePod("ns/" + name + "-node-0-0")
			nodes.SetPod("ns/"+name+"-node-0-0", name+"-node-0", corev1.PodRunning,
				corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")})
		}
	}
	return touch, func(req *api.ReplicaRequirements) func(string) (int32, bool) {
		r := estimator.NewRequirement(req)
		return func(cluster string) (int32, bool) {
			n, ok := members[cluster]
			if !ok {
				return 0, false
			}
			return n.MaxReplicas(r), true
		}
	}
}

// BenchmarkNodeEstimateSchedule compares dynamic-weight decisions over a
// shared Snapshot with the general estimator alone and with the per-node
// estimator over ten nodes per cluster (the goal: no more than twice the
// general estimator's time at 100 and 1,000 clusters): "per-node" after a
// change to every member, so every cluster's nodes are walked,
// "per-node-memo" for a template of the shape decided last with no change
// since (a resync); run it with -benchtime=200x.
func BenchmarkNodeEstimateSchedule(b *testing.B) {
	for _, n := range []int{100, 1000} {
		clusters := fleet(n)
		snapshot := scheduler.NewSnapshot(clusters)
		touch, perNode := benchNodes(clusters)
		for _, mode := range []string{"general", "per-node", "per-node-memo"} {
			binding := benchBinding(placement(policy().DynamicWeight()))
			if mode != "general" {
				binding.NodeEstimates = perNode
			}
			b.Run(fmt.Sprintf("clusters=%d/%s", n, mode), func(b *testing.B) {
				samples := make([]time.Duration, 0, b.N)
				for b.Loop() {
					if mode == "per-node" {
						touch()
					}
					start := time.Now()
					if _, err := snapshot.Schedule(binding); err != nil {
						b.Fatal(err)
					}
					samples = append(samples, time.Since(start))
				}
				sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
				b.ReportMetric(float64(percentile(samples, 50).Microseconds()), "p50-µs")
				b.ReportMetric(float64(percentile(samples, 99).Microseconds()), "p99-µs")
			})
		}
	}
}
