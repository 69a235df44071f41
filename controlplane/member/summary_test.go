package member

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// nodeWrapper builds a Node: makeNode("n1").Ready().Allocatable("4", "8Gi", "110").Obj().
type nodeWrapper struct{ n corev1.Node }

func makeNode(name string) *nodeWrapper {
	return &nodeWrapper{n: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

func (w *nodeWrapper) Ready() *nodeWrapper { return w.condition(corev1.ConditionTrue) }

func (w *nodeWrapper) NotReady() *nodeWrapper { return w.condition(corev1.ConditionFalse) }

func (w *nodeWrapper) condition(s corev1.ConditionStatus) *nodeWrapper {
	w.n.Status.Conditions = append(w.n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: s})
	return w
}

func (w *nodeWrapper) Cordoned() *nodeWrapper { w.n.Spec.Unschedulable = true; return w }

func (w *nodeWrapper) Allocatable(cpu, memory, pods string) *nodeWrapper {
	w.n.Status.Allocatable = resourceList(cpu, memory, pods)
	return w
}

func (w *nodeWrapper) Obj() *corev1.Node { return w.n.DeepCopy() }

// podWrapper builds a Pod: makePod("p").On("n1").Container("500m", "1Gi").Obj().
type podWrapper struct{ p corev1.Pod }

func makePod(name string) *podWrapper {
	return &podWrapper{p: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}}
}

func (w *podWrapper) On(node string) *podWrapper { w.p.Spec.NodeName = node; return w }

func (w *podWrapper) Pending() *podWrapper { w.p.Status.Phase = corev1.PodPending; return w }

func (w *podWrapper) Phase(p corev1.PodPhase) *podWrapper { w.p.Status.Phase = p; return w }

func (w *podWrapper) Container(cpu, memory string) *podWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, corev1.Container{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: resourceList(cpu, memory, "")},
	})
	return w
}

func (w *podWrapper) InitContainer(cpu, memory string) *podWrapper {
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, corev1.Container{
		Name: "init", Resources: corev1.ResourceRequirements{Requests: resourceList(cpu, memory, "")},
	})
	return w
}

func (w *podWrapper) Overhead(cpu string) *podWrapper {
	w.p.Spec.Overhead = resourceList(cpu, "", "")
	return w
}

func (w *podWrapper) Obj() *corev1.Pod { return w.p.DeepCopy() }

// resourceList builds a list from cpu, memory and pods; empty ones are left out.
func resourceList(cpu, memory, pods string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory, corev1.ResourcePods: pods} {
		if v != "" {
			l[name] = resource.MustParse(v)
		}
	}
	return l
}

func TestSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		nodes     []*corev1.Node
		pods      []*corev1.Pod
		wantNodes *api.NodeSummary
		want      *api.ResourceSummary
	}{
		{
			name:      "empty cluster",
			wantNodes: &api.NodeSummary{},
			want: &api.ResourceSummary{
				Allocatable: corev1.ResourceList{},
				Allocated:   resourceList("0", "0", "0"),
				Allocating:  resourceList("0", "0", "0"),
			},
		},
		{
			name: "only ready, schedulable nodes are allocatable",
			nodes: []*corev1.Node{
				makeNode("a").Ready().Allocatable("4", "8Gi", "110").Obj(),
				makeNode("b").Ready().Allocatable("2", "4Gi", "110").Obj(),
				makeNode("down").NotReady().Allocatable("8", "16Gi", "110").Obj(),
				makeNode("new").Allocatable("8", "16Gi", "110").Obj(),
				makeNode("cordoned").Ready().Cordoned().Allocatable("8", "16Gi", "110").Obj(),
			},
			wantNodes: &api.NodeSummary{TotalNum: 5, ReadyNum: 3},
			want: &api.ResourceSummary{
				Allocatable: resourceList("6", "12Gi", "220"),
				Allocated:   resourceList("0", "0", "0"),
				Allocating:  resourceList("0", "0", "0"),
			},
		},
		{
			name: "bound pods are allocated, unbound ones allocating, terminal ones nothing",
			nodes: []*corev1.Node{
				makeNode("a").Ready().Allocatable("4", "8Gi", "110").Obj(),
				makeNode("down").NotReady().Allocatable("8", "16Gi", "110").Obj(),
				makeNode("cordoned").Ready().Cordoned().Allocatable("8", "16Gi", "110").Obj(),
			},
			pods: []*corev1.Pod{
				makePod("web-1").On("a").Container("500m", "1Gi").Container("250m", "256Mi").Obj(),
				makePod("web-2").On("a").Pending().Container("1", "1Gi").Obj(),
				makePod("no-requests").On("a").Obj(),
				makePod("done").On("a").Phase(corev1.PodSucceeded).Container("2", "2Gi").Obj(),
				makePod("crashed").On("a").Phase(corev1.PodFailed).Container("2", "2Gi").Obj(),
				makePod("on-down-node").On("down").Container("2", "2Gi").Obj(),
				makePod("on-cordoned-node").On("cordoned").Container("2", "2Gi").Obj(),
				makePod("unbound").Pending().Container("300m", "100Mi").Obj(),
				makePod("gated").Pending().Container("200m", "").Obj(),
			},
			wantNodes: &api.NodeSummary{TotalNum: 3, ReadyNum: 2},
			want: &api.ResourceSummary{
				Allocatable: resourceList("4", "8Gi", "110"),
				Allocated:   resourceList("1750m", "2304Mi", "3"),
				Allocating:  resourceList("500m", "100Mi", "2"),
			},
		},
		{
			name:  "effective request: init container peak and overhead",
			nodes: []*corev1.Node{makeNode("a").Ready().Allocatable("4", "8Gi", "110").Obj()},
			pods: []*corev1.Pod{
				makePod("migrate").On("a").Container("100m", "64Mi").InitContainer("1", "32Mi").Overhead("50m").Obj(),
			},
			wantNodes: &api.NodeSummary{TotalNum: 1, ReadyNum: 1},
			want: &api.ResourceSummary{
				Allocatable: resourceList("4", "8Gi", "110"),
				Allocated:   resourceList("1050m", "64Mi", "1"),
				Allocating:  resourceList("0", "0", "0"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSummary()
			for _, n := range tt.nodes {
				s.addNode(n)
			}
			for _, p := range tt.pods {
				s.addPod(p)
			}
			if diff := cmp.Diff(tt.wantNodes, s.nodeSummary()); diff != "" {
				t.Errorf("node summary (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, s.resourceSummary(), quantities); diff != "" {
				t.Errorf("resource summary (-want +got):\n%s", diff)
			}
		})
	}
}
