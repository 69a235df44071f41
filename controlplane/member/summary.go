package member

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

// listPageSize is how many nodes or pods one list request returns, so a
// large member is read in bounded pages rather than in one huge response.
const listPageSize = 500

// nonTerminalPods selects the pods kube-scheduler still accounts for.
var nonTerminalPods = fields.AndSelectors(
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
	fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
).String()

// summarize sums the member's nodes and non-terminal pods: from the
// member's informers when the cache watches members (CacheOptions.Watch),
// else by listing them. A node list (or watch) failure leaves both summaries
// nil; a pod list failure leaves the resource summary nil.
func (c *Client) summarize(ctx context.Context) (*api.NodeSummary, *api.ResourceSummary, error) {
	if c.watch != nil {
		nodes, resources, err := c.watch.summarize(ctx)
		if !errors.Is(err, errWatchStopped) {
			return nodes, resources, err
		}
		// The client was replaced or invalidated while in use (its last
		// caller still gets an answer), or its credentials may not watch:
		// list.
	}
	return c.listSummaries(ctx)
}

// listSummaries lists the member's nodes, then its non-terminal pods, page
// by page, and sums them. The same lists fill a per-node index, kept as the
// client's listed nodes (Client.Nodes) when both lists succeed.
func (c *Client) listSummaries(ctx context.Context) (*api.NodeSummary, *api.ResourceSummary, error) {
	s, index := newSummary(), estimator.NewNodes()
	nodes := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.Kubernetes.CoreV1().Nodes().List(ctx, opts)
	})
	nodes.PageSize = listPageSize
	if err := nodes.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		s.addNode(obj.(*corev1.Node))
		index.SetNode(obj.(*corev1.Node))
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("list nodes: %w", err)
	}
	pods := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return c.Kubernetes.CoreV1().Pods(metav1.NamespaceAll).List(ctx, opts)
	})
	pods.PageSize = listPageSize
	if err := pods.EachListItem(ctx, metav1.ListOptions{FieldSelector: nonTerminalPods}, func(obj runtime.Object) error {
		p := obj.(*corev1.Pod)
		requests := podRequests(p)
		s.addUsage(p.Spec.NodeName, p.Status.Phase, func() corev1.ResourceList { return requests })
		index.SetPod(p.Namespace+"/"+p.Name, p.Spec.NodeName, p.Status.Phase, requests)
		return nil
	}); err != nil {
		return s.nodeSummary(), nil, fmt.Errorf("list pods: %w", err)
	}
	c.listed.Store(index)
	return s.nodeSummary(), s.resourceSummary(), nil
}

// summary accumulates nodes, then pods, into Karmada's node and resource
// summaries. It is pure, so it is table-tested without an apiserver.
//
// Allocatable counts only nodes that are Ready and schedulable, because
// nothing new lands on the others. Allocated counts the non-terminal pods
// bound to one of those nodes, so that allocatable − allocated stays the
// room on nodes that can take work; pods on an unready or cordoned node are
// left out of both. Allocating counts the non-terminal pods not bound yet,
// as Karmada does. Each list also counts pods under "pods".
type summary struct {
	total, ready int32
	usable       map[string]bool

	allocatable, allocated, allocating corev1.ResourceList
	allocatedPods, allocatingPods      int64
}

func newSummary() *summary {
	return &summary{
		usable:      map[string]bool{},
		allocatable: corev1.ResourceList{},
		allocated:   zeroRequests(),
		allocating:  zeroRequests(),
	}
}

// zeroRequests starts a request sum with cpu and memory at zero, so the
// summary states "nothing requested" rather than leaving them out.
func zeroRequests() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(0, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(0, resource.BinarySI),
	}
}

func (s *summary) addNode(n *corev1.Node) {
	s.total++
	if !nodeReady(n) {
		return
	}
	s.ready++
	if n.Spec.Unschedulable {
		return
	}
	s.usable[n.Name] = true
	addResources(s.allocatable, n.Status.Allocatable)
}

func (s *summary) addPod(p *corev1.Pod) {
	s.addUsage(p.Spec.NodeName, p.Status.Phase, func() corev1.ResourceList { return podRequests(p) })
}

// addUsage counts a pod by what the summary needs of it: the node it is
// bound to, its phase and its requests (computed only when counted).
func (s *summary) addUsage(nodeName string, phase corev1.PodPhase, requests func() corev1.ResourceList) {
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		return
	}
	switch {
	case nodeName == "":
		addResources(s.allocating, requests())
		s.allocatingPods++
	case s.usable[nodeName]:
		addResources(s.allocated, requests())
		s.allocatedPods++
	}
}

// podRequests is what kube-scheduler reserves for a pod: the larger of the
// containers' sum and the init containers' peak (sidecars included),
// pod-level requests where set, overhead, and the resized resources of a
// running pod.
func podRequests(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{UseStatusResources: true})
}

func (s *summary) nodeSummary() *api.NodeSummary {
	return &api.NodeSummary{TotalNum: s.total, ReadyNum: s.ready}
}

func (s *summary) resourceSummary() *api.ResourceSummary {
	allocated, allocating := s.allocated.DeepCopy(), s.allocating.DeepCopy()
	allocated[corev1.ResourcePods] = *resource.NewQuantity(s.allocatedPods, resource.DecimalSI)
	allocating[corev1.ResourcePods] = *resource.NewQuantity(s.allocatingPods, resource.DecimalSI)
	return &api.ResourceSummary{
		Allocatable: s.allocatable.DeepCopy(),
		Allocated:   allocated,
		Allocating:  allocating,
	}
}

func addResources(sum, add corev1.ResourceList) {
	for name, q := range add {
		total, ok := sum[name]
		if !ok {
			sum[name] = q.DeepCopy()
			continue
		}
		total.Add(q)
		sum[name] = total
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
