package estimator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

type nodeOpt func(*corev1.Node)

func labels(kv ...string) nodeOpt {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(kv); i += 2 {
			n.Labels[kv[i]] = kv[i+1]
		}
	}
}

func taint(key string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: effect}) }
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }
func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func allocatable(pairs ...string) nodeOpt {
	return func(n *corev1.Node) {
		for i := 0; i+1 < len(pairs); i += 2 {
			n.Status.Allocatable[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
	}
}

// testNode is a Ready node with 4 cores, 8Gi and 110 pod slots.
func testNode(name string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110"),
			},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func req(claim *api.NodeClaim, pairs ...string) *api.ReplicaRequirements {
	return &api.ReplicaRequirements{ResourceRequest: free(pairs...), NodeClaim: claim}
}

func TestMaxReplicas(t *testing.T) {
	gpu := "nvidia.com/gpu"
	cases := []struct {
		name  string
		nodes []*corev1.Node
		pods  map[string][2]string // key -> node, cpu request
		req   *api.ReplicaRequirements
		want  int32
	}{
		{"no nodes", nil, nil, req(nil, "cpu", "1"), 0},
		{"per node, not the sum: 1.5 cores free on each of two nodes hold no 2-core replica",
			[]*corev1.Node{testNode("a"), testNode("b")}, map[string][2]string{"x/1": {"a", "2500m"}, "x/2": {"b", "2500m"}},
			req(nil, "cpu", "2"), 0},
		{"summed over nodes", []*corev1.Node{testNode("a"), testNode("b")}, map[string][2]string{"x/1": {"a", "1"}},
			req(nil, "cpu", "1"), 3 + 4},
		{"smallest quotient per node", []*corev1.Node{testNode("a")}, nil, req(nil, "cpu", "500m", "memory", "2Gi"), 4},
		{"no request: free pod slots", []*corev1.Node{testNode("a", allocatable("pods", "3"))}, map[string][2]string{"x/1": {"a", "0"}},
			nil, 2},
		{"pod slots bound the request", []*corev1.Node{testNode("a", allocatable("pods", "2"))}, nil, req(nil, "cpu", "100m"), 2},
		{"a pending pod counts nowhere", []*corev1.Node{testNode("a")}, map[string][2]string{"x/1": {"", "4"}}, req(nil, "cpu", "1"), 4},
		{"a pod on an unknown node counts nowhere", []*corev1.Node{testNode("a")}, map[string][2]string{"x/1": {"gone", "4"}}, req(nil, "cpu", "1"), 4},
		{"not Ready holds none", []*corev1.Node{testNode("a", notReady), testNode("b")}, nil, req(nil, "cpu", "1"), 4},
		{"cordoned holds none", []*corev1.Node{testNode("a", cordoned), testNode("b")}, nil, req(nil, "cpu", "1"), 4},
		{"cordoned, tolerated", []*corev1.Node{testNode("a", cordoned)},
			nil, req(&api.NodeClaim{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}}}, "cpu", "1"), 4},
		{"NoSchedule taint holds none", []*corev1.Node{testNode("a", taint("gpu", corev1.TaintEffectNoSchedule)), testNode("b")}, nil,
			req(nil, "cpu", "1"), 4},
		{"NoExecute taint holds none", []*corev1.Node{testNode("a", taint("gpu", corev1.TaintEffectNoExecute))}, nil, req(nil, "cpu", "1"), 0},
		{"PreferNoSchedule taint is no bar", []*corev1.Node{testNode("a", taint("gpu", corev1.TaintEffectPreferNoSchedule))}, nil, req(nil, "cpu", "1"), 4},
		{"tolerated taint", []*corev1.Node{testNode("a", taint("gpu", corev1.TaintEffectNoSchedule))}, nil,
			req(&api.NodeClaim{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}, "cpu", "1"), 4},
		{"node selector", []*corev1.Node{testNode("a", labels("disk", "ssd")), testNode("b")}, nil,
			req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}, "cpu", "2"), 2},
		{"hard node affinity by label", []*corev1.Node{testNode("a", labels("zone", "z1")), testNode("b", labels("zone", "z2")), testNode("c")}, nil,
			req(&api.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1", "z2"}}},
			}}}}, "cpu", "1"), 8},
		{"hard node affinity by name (matchFields)", []*corev1.Node{testNode("a"), testNode("b")}, nil,
			req(&api.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}},
			}}}}, "cpu", "1"), 4},
		{"selector and affinity both apply", []*corev1.Node{testNode("a", labels("disk", "ssd", "zone", "z1")), testNode("b", labels("disk", "ssd"))}, nil,
			req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}, HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}},
			}}}}, "cpu", "1"), 4},
		{"extended resource only where reported", []*corev1.Node{testNode("a", allocatable(gpu, "2")), testNode("b")}, nil, req(nil, gpu, "1"), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNodes()
			for _, nd := range tc.nodes {
				n.SetNode(nd)
			}
			for key, p := range tc.pods {
				n.SetPod(key, p[0], corev1.PodRunning, free("cpu", p[1]))
			}
			if got := n.MaxReplicas(NewRequirement(tc.req)); got != tc.want {
				t.Errorf("MaxReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestNodesIncremental attacks the bookkeeping: a pod updated, moved,
// finished and deleted must leave exactly what it counted, and a node
// deleted and re-added finds its pods.
func TestNodesIncremental(t *testing.T) {
	n := NewNodes()
	n.SetNode(testNode("a"))
	n.SetNode(testNode("b"))
	one := NewRequirement(req(nil, "cpu", "1"))
	check := func(step string, want int32) {
		t.Helper()
		if got := n.MaxReplicas(one); got != want {
			t.Fatalf("%s: MaxReplicas = %d, want %d", step, got, want)
		}
	}
	check("empty", 8)
	n.SetPod("ns/p", "", corev1.PodPending, free("cpu", "2"))
	check("pending", 8)
	n.SetPod("ns/p", "a", corev1.PodRunning, free("cpu", "2"))
	check("bound to a", 6)
	n.SetPod("ns/p", "a", corev1.PodRunning, free("cpu", "3"))
	check("resized", 5)
	n.SetPod("ns/p", "b", corev1.PodRunning, free("cpu", "3"))
	check("moved to b (a recreated pod of the same name)", 5)
	n.DeleteNode("b")
	check("b gone", 4)
	n.SetNode(testNode("b"))
	check("b back with its pod", 5)
	n.SetPod("ns/p", "b", corev1.PodSucceeded, free("cpu", "3"))
	check("finished", 8)
	n.SetPod("ns/p", "b", corev1.PodRunning, free("cpu", "3"))
	n.DeletePod("ns/p")
	n.DeletePod("ns/p")
	check("deleted twice", 8)
	if len(n.used) != 0 || len(n.pods) != 0 {
		t.Errorf("bookkeeping left behind: used %v pods %v", n.used, n.pods)
	}
	n.SetNode(testNode("a", cordoned))
	check("a cordoned by an update", 4)

	// Deleting from the middle moves the last node into its place: an
	// update of the moved node and a pod on it must still find it.
	n.SetNode(testNode("c"))
	n.SetNode(testNode("d"))
	check("c and d added", 12)
	n.DeleteNode("b")
	check("b deleted from the middle", 8)
	n.SetNode(testNode("d", cordoned))
	check("d, moved, cordoned", 4)
	n.SetPod("ns/q", "c", corev1.PodRunning, free("cpu", "2"))
	check("pod on c", 2)
	n.DeleteNode("c")
	n.DeleteNode("c")
	check("c deleted twice", 0)
	n.SetNode(testNode("c"))
	check("c back with its pod", 2)
	if n.Len() != 3 {
		t.Errorf("Len = %d, want 3 (a, c, d)", n.Len())
	}
}

func TestNodesFree(t *testing.T) {
	n := NewNodes()
	n.SetNode(testNode("a"))
	n.SetNode(testNode("full", allocatable("pods", "1")))
	n.SetNode(testNode("idle-no-slots", allocatable("pods", "0")))
	n.SetNode(testNode("down", notReady))
	n.SetNode(testNode("off", cordoned))
	n.SetPod("ns/1", "a", corev1.PodRunning, free("cpu", "1500m", "memory", "1Gi"))
	n.SetPod("ns/2", "full", corev1.PodRunning, free("cpu", "1"))
	got := map[string]bool{}
	for _, f := range n.Free() {
		cpu, mem, pods := f[corev1.ResourceCPU], f[corev1.ResourceMemory], f[corev1.ResourcePods]
		got[fmt.Sprintf("%s/%s/%s", cpu.String(), mem.String(), pods.String())] = true
	}
	// "a" less its pod; "idle-no-slots" has no pod bound, so Karmada grades
	// it; "full", "down" and "off" are left out.
	want := map[string]bool{"2500m/7Gi/109": true, "4/8Gi/0": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Free = %v, want %v", got, want)
	}
}

// TestMaxReplicasMemo attacks the memo: an answer is reused only for an
// equal requirement and only while the member is unchanged.
func TestMaxReplicasMemo(t *testing.T) {
	n := NewNodes()
	n.SetNode(testNode("a", labels("disk", "ssd")))
	n.SetNode(testNode("b", labels("disk", "hdd")))
	ssd := func() *Requirement {
		return NewRequirement(req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}, "cpu", "1"))
	}
	hdd := NewRequirement(req(&api.NodeClaim{NodeSelector: map[string]string{"disk": "hdd"}}, "cpu", "2"))
	steps := []struct {
		name string
		r    *Requirement
		want int32
	}{
		{"ssd", ssd(), 4},
		{"hdd: another selector and request", hdd, 2},
		{"ssd, built again", ssd(), 4},
		{"any node, 1 core", NewRequirement(req(nil, "cpu", "1")), 8},
		{"any node, 2 cores", NewRequirement(req(nil, "cpu", "2")), 4},
		{"a pod slot", NewRequirement(nil), 220},
	}
	for _, s := range steps {
		if got := n.MaxReplicas(s.r); got != s.want {
			t.Errorf("%s: MaxReplicas = %d, want %d", s.name, got, s.want)
		}
	}
	n.SetPod("ns/p", "a", corev1.PodRunning, free("cpu", "3"))
	if got := n.MaxReplicas(ssd()); got != 1 {
		t.Errorf("after a pod on a: MaxReplicas = %d, want 1", got)
	}
}
