package estimator

import (
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// benchMember is a member of n nodes of 4 cores and 8Gi, each running 20
// pods of 150m and 256Mi; a tenth of the nodes carry a disk=ssd label and
// a twentieth a dedicated=gpu:NoSchedule taint.
func benchMember(n int) *Nodes {
	nodes := NewNodes()
	for i := range n {
		opts := []nodeOpt{}
		if i%10 == 0 {
			opts = append(opts, labels("disk", "ssd"))
		}
		if i%20 == 0 {
			opts = append(opts, taint("dedicated", corev1.TaintEffectNoSchedule))
		}
		name := fmt.Sprintf("node-%04d", i)
		nodes.SetNode(testNode(name, opts...))
		for p := range 20 {
			nodes.SetPod(fmt.Sprintf("ns/%s-%d", name, p), name, corev1.PodRunning, free("cpu", "150m", "memory", "256Mi"))
		}
	}
	return nodes
}

// BenchmarkNodeEstimate is the per-node estimate of one template over a
// 1,000-node member (the goal: p50 ≤ 1 ms), reporting the median and
// 99th percentile of single estimates: "after-change" when a pod came or
// went on one node since the last estimate of that shape (the memo refits
// that node), "cold" for a shape never estimated before (every node is
// walked); run it with -benchtime=200x.
func BenchmarkNodeEstimate(b *testing.B) {
	member := benchMember(1000)
	claims := []struct {
		name string
		req  *api.ReplicaRequirements
	}{
		{"requests", req(nil, "cpu", "500m", "memory", "1Gi")},
		{"selector", req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}, "cpu", "500m", "memory", "1Gi")},
		{"affinity+tolerations", req(&api.NodeClaim{
			HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpExists}},
			}}},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		}, "cpu", "500m", "memory", "1Gi")},
	}
	for _, c := range claims {
		for _, mode := range []string{"after-change", "cold"} {
			b.Run("nodes=1000/"+c.name+"/"+mode, func(b *testing.B) {
				samples := make([]time.Duration, 0, b.N)
				for i := 0; b.Loop(); i++ {
					r := c.req
					if mode == "cold" {
						// Another memory request per estimate: a shape
						// the memo has not seen.
						r = r.DeepCopy()
						r.ResourceRequest[corev1.ResourceMemory] = *resource.NewQuantity(int64(1<<30+i), resource.BinarySI)
					}
					member.SetPod("bench/toggle", "node-0001", []corev1.PodPhase{corev1.PodRunning, corev1.PodSucceeded}[i%2], free("cpu", "1"))
					start := time.Now()
					// The requirement is prepared per decision, as the
					// scheduler does.
					if member.MaxReplicas(NewRequirement(r)) == 0 {
						b.Fatal("nothing fits")
					}
					samples = append(samples, time.Since(start))
				}
				sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
				b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(samples[min(len(samples)*99/100, len(samples)-1)].Microseconds()), "p99-µs")
			})
		}
	}
}
