package estimator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestMaxReplicasIncremental attacks the incremental memo: after every
// change of a long random sequence (nodes added, replaced with other labels,
// taints, readiness or size, and deleted; pods bound, moved between nodes,
// finished, deleted, and bound to a node not yet seen), each memoized
// requirement's answer must equal a fresh walk of the nodes.
func TestMaxReplicasIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 35))
	n := NewNodes()
	reqs := []*Requirement{
		NewRequirement(nil),
		NewRequirement(req(nil, "cpu", "500m", "memory", "1Gi")),
		NewRequirement(req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}, "cpu", "1")),
		NewRequirement(req(&api.NodeClaim{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}, "cpu", "250m", "nvidia.com/gpu", "1")),
	}
	nodeNames := []string{"a", "b", "c", "d", "e", "f"}
	opts := []nodeOpt{labels("disk", "ssd"), labels("disk", "hdd"), taint("gpu", corev1.TaintEffectNoSchedule), cordoned, notReady,
		allocatable("cpu", "2"), allocatable("nvidia.com/gpu", "2"), allocatable("pods", "3")}
	phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded}
	for step := range 3000 {
		node := nodeNames[rng.IntN(len(nodeNames))]
		var what string
		switch rng.IntN(6) {
		case 0, 1:
			o := []nodeOpt{opts[rng.IntN(len(opts))], opts[rng.IntN(len(opts))]}
			n.SetNode(testNode(node, o...))
			what = "set node " + node
		case 2:
			n.DeleteNode(node)
			what = "delete node " + node
		case 3:
			n.DeletePod(fmt.Sprintf("ns/p%d", rng.IntN(20)))
			what = "delete pod"
		default:
			key := fmt.Sprintf("ns/p%d", rng.IntN(20))
			if rng.IntN(8) == 0 {
				node = ""
			}
			n.SetPod(key, node, phases[rng.IntN(len(phases))], free("cpu", fmt.Sprintf("%dm", 100*(1+rng.IntN(10))), "memory", "512Mi", "nvidia.com/gpu", "1"))
			what = "set pod " + key + " on " + node
		}
		for _, r := range reqs[:1+rng.IntN(len(reqs))] {
			got := n.MaxReplicas(r)
			n.mu.RLock()
			want := clamp(n.walk(r, nil))
			n.mu.RUnlock()
			if got != want {
				t.Fatalf("step %d (%s), requirement %q: MaxReplicas = %d, a fresh walk says %d", step, what, r.Key(), got, want)
			}
		}
	}
}
