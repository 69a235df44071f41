package estimator

import (
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Nodes is one member's nodes and, per node, what the pods bound to it
// request, kept up to date event by event (SetNode, DeleteNode, SetPod,
// DeletePod), so an estimate reads memory and never lists pods. It is safe
// for concurrent use: the member's informers write while the scheduler
// reads.
type Nodes struct {
	mu sync.RWMutex
	// list holds the nodes by value, densely, for estimates to walk
	// without chasing a pointer per node; index is each node's position in
	// it.
	list  []node
	index map[string]int
	// used is, per node name, what the pods bound to it request; kept apart
	// from the nodes because a pod may be seen before its node. A node
	// points at its entry (node.used), so an estimate looks nothing up.
	used map[string]*amounts
	// pods is each counted pod's node and requests, by namespace/name, so
	// an update or delete takes back exactly what was added.
	pods map[string]podEntry
	// memo holds, per requirement (by Requirement.hash, checked against its
	// key), what each node holds and their sum, kept up to date by every
	// change to a node or a pod (a change refits that node alone), so the
	// many templates of one shape that a resync schedules in a row, and
	// every decision after an informer event, read one number instead of
	// walking the nodes. The map is replaced, never changed, when a shape
	// joins (memoMu orders those), so estimates read it without a lock of
	// their own; its entries change only under mu held for writing.
	memoMu sync.Mutex
	memo   atomic.Pointer[map[uint64]*memoEntry]
}

// memoEntries is the current memo; nil before the first shape joins.
func (n *Nodes) memoEntries() map[uint64]*memoEntry {
	if m := n.memo.Load(); m != nil {
		return *m
	}
	return nil
}

// memoEntry is one requirement's fit on every node.
type memoEntry struct {
	r *Requirement
	// fit is, by position in Nodes.list, how many replicas the node holds;
	// -1 for a node that does not admit the requirement at all (its
	// labels, taints or readiness; a pod event does not change that).
	fit []int64
	// total is the sum of the non-negative fits.
	total int64
}

// maxMemo bounds the memo of one member; past it the memo starts over.
// Every change refits each entry's node, so the bound is also what one
// informer event may cost.
const maxMemo = 256

type node struct {
	// obj keeps the name, labels and taints node affinity and tolerations
	// are matched against.
	obj *corev1.Node
	// used is the node's entry in Nodes.used; nil while no pod is bound.
	used *amounts
	// tainted says obj has taints, so an estimate looks at them only then.
	tainted       bool
	ready         bool
	unschedulable bool
	allocatable   amounts
}

type podEntry struct {
	node     string
	requests amounts
}

// NewNodes returns an empty Nodes.
func NewNodes() *Nodes {
	return &Nodes{index: map[string]int{}, used: map[string]*amounts{}, pods: map[string]podEntry{}}
}

// SetNode adds or replaces a node. Only its name, labels, taints,
// unschedulable flag, Ready condition and allocatable resources are read.
func (n *Nodes) SetNode(obj *corev1.Node) {
	nd := node{
		obj: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: obj.Name, Labels: obj.Labels},
			Spec:       corev1.NodeSpec{Taints: obj.Spec.Taints, Unschedulable: obj.Spec.Unschedulable},
		},
		unschedulable: obj.Spec.Unschedulable,
		tainted:       len(obj.Spec.Taints) > 0,
		allocatable:   amountsOf(obj.Status.Allocatable),
	}
	for _, c := range obj.Status.Conditions {
		if c.Type == corev1.NodeReady {
			nd.ready = c.Status == corev1.ConditionTrue
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	nd.used = n.used[obj.Name]
	if i, ok := n.index[obj.Name]; ok {
		n.list[i] = nd
		n.refit(i, true)
		return
	}
	n.index[obj.Name] = len(n.list)
	n.list = append(n.list, nd)
	for _, e := range n.memoEntries() {
		e.fit = append(e.fit, -1)
	}
	n.refit(len(n.list)-1, true)
}

// DeleteNode forgets a node. Its pods stay counted against its name until
// they are deleted, so a node that comes back finds them.
func (n *Nodes) DeleteNode(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i, ok := n.index[name]
	if !ok {
		return
	}
	last := len(n.list) - 1
	for _, e := range n.memoEntries() {
		e.total -= max(e.fit[i], 0)
		e.fit[i] = e.fit[last]
		e.fit = e.fit[:last]
	}
	n.list[i] = n.list[last]
	n.index[n.list[i].obj.Name] = i
	n.list[last] = node{}
	n.list = n.list[:last]
	delete(n.index, name)
}

// SetPod records a pod (key is namespace/name): bound to nodeName and not
// terminal, it counts as one pod slot and its requests on that node, as in
// kube-scheduler's cache; otherwise it counts nowhere. A pod set again
// replaces what it counted before.
func (n *Nodes) SetPod(key, nodeName string, phase corev1.PodPhase, requests corev1.ResourceList) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropPod(key)
	if nodeName == "" || phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		return
	}
	e := podEntry{node: nodeName, requests: amountsOf(requests)}
	e.requests.pods = 1
	u := n.used[nodeName]
	if u == nil {
		u = &amounts{}
		n.used[nodeName] = u
		if i, ok := n.index[nodeName]; ok {
			n.list[i].used = u
		}
	}
	u.add(e.requests, 1)
	n.pods[key] = e
	if i, ok := n.index[nodeName]; ok {
		n.refit(i, false)
	}
}

// DeletePod forgets a pod.
func (n *Nodes) DeletePod(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.dropPod(key)
}

func (n *Nodes) dropPod(key string) {
	e, ok := n.pods[key]
	if !ok {
		return
	}
	delete(n.pods, key)
	u := n.used[e.node]
	u.add(e.requests, -1)
	if u.pods == 0 {
		delete(n.used, e.node)
		if i, ok := n.index[e.node]; ok {
			n.list[i].used = nil
		}
	}
	if i, ok := n.index[e.node]; ok {
		n.refit(i, false)
	}
}

// refit brings every memo entry's fit on the node at position i up to
// date after a change to it: to its pods (admission is unchanged, so a
// node that did not admit a requirement is passed over) or, when admission
// is true, to the node itself. Call with mu held for writing.
func (n *Nodes) refit(i int, admission bool) {
	nd := &n.list[i]
	for _, e := range n.memoEntries() {
		old := e.fit[i]
		if old < 0 && !admission {
			continue
		}
		fit := int64(-1)
		if !admission || e.r.admits(nd) {
			fit = nd.fits(e.r)
		}
		e.total += max(fit, 0) - max(old, 0)
		e.fit[i] = fit
	}
}

// Len is the number of nodes.
func (n *Nodes) Len() int {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return len(n.list)
}

// Free lists, for every node that is Ready and schedulable, its
// allocatable resources less what its pods request ("pods" less the pods
// bound to it), for AllocatableModelings. Nothing new lands on the other
// nodes, so they are left out, as in the member's resource summary. A node
// whose pods already fill its pod slots is left out as well, as Karmada
// leaves it out of the modelings (Karmada stops counting at the first such
// node, which depends on list order; flotilla skips just that node).
func (n *Nodes) Free() []corev1.ResourceList {
	n.mu.RLock()
	defer n.mu.RUnlock()
	out := make([]corev1.ResourceList, 0, len(n.list))
	for i := range n.list {
		nd := &n.list[i]
		if !nd.ready || nd.unschedulable {
			continue
		}
		free := nd.free()
		if nd.used != nil && free.pods <= 0 {
			continue
		}
		out = append(out, free.list())
	}
	return out
}

// free is the node's allocatable less its pods' requests. Call with
// Nodes.mu held.
func (nd *node) free() amounts {
	free := amounts{cpu: nd.allocatable.cpu, memory: nd.allocatable.memory, pods: nd.allocatable.pods}
	for k, v := range nd.allocatable.other {
		free.set(k, v)
	}
	if u := nd.used; u != nil {
		free.cpu -= u.cpu
		free.memory -= u.memory
		free.pods -= u.pods
		for k, v := range u.other {
			if have, ok := free.other[k]; ok {
				free.other[k] = have - v
			}
		}
	}
	return free
}
