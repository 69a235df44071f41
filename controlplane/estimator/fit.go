package estimator

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Requirement is one replica's requirements prepared for matching against
// many nodes: its positive requests in estimator units, its required node
// affinity (node selector and hard node affinity together) and its
// tolerations.
type Requirement struct {
	// key identifies the requirement for Nodes' memo; empty, it is not
	// memoized. hash is its hash, computed once per requirement so that a
	// decision over many members does not hash the key once per member.
	key         string
	hash        uint64
	wants       []want
	affinity    nodeaffinity.RequiredNodeAffinity
	constrained bool
	tolerations []corev1.Toleration
}

type want struct {
	name corev1.ResourceName
	n    int64
}

// NewRequirement prepares req; nil means a pod slot and nothing else.
func NewRequirement(req *api.ReplicaRequirements) *Requirement {
	r := &Requirement{key: "pods"}
	if req == nil {
		r.hash = maphash.String(keySeed, r.key)
		return r
	}
	for name, q := range req.ResourceRequest {
		if n := scaled(name, q); n > 0 {
			r.wants = append(r.wants, want{name, n})
		}
	}
	sort.Slice(r.wants, func(i, j int) bool { return r.wants[i].name < r.wants[j].name })
	var key strings.Builder
	key.WriteString("pods,")
	for _, w := range r.wants {
		fmt.Fprintf(&key, "%s=%d,", w.name, w.n)
	}
	if c := req.NodeClaim; c != nil {
		// encoding/json sorts the selector's keys; a claim that does not
		// encode (not reachable for the API type) is never memoized.
		r.constrain(c)
		claim, err := json.Marshal(c)
		if err != nil {
			r.key = ""
			return r
		}
		key.Write(claim)
	}
	r.key = key.String()
	r.hash = maphash.String(keySeed, r.key)
	return r
}

// keySeed seeds the requirement keys' hashes for this process.
var keySeed = maphash.MakeSeed()

// Key identifies the requirement: two requirements with the same key fit
// the same nodes the same way (same requests in estimator units, same node
// claim). Empty when the requirement cannot be identified; such a
// requirement is never memoized nor recorded.
func (r *Requirement) Key() string { return r.key }

// constrain sets the node constraints of claim.
func (r *Requirement) constrain(c *api.NodeClaim) {
	r.tolerations = c.Tolerations
	if len(c.NodeSelector) > 0 || c.HardNodeAffinity != nil {
		r.constrained = true
		var affinity *corev1.Affinity
		if c.HardNodeAffinity != nil {
			affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: c.HardNodeAffinity}}
		}
		r.affinity = nodeaffinity.NewRequiredNodeAffinity(c.NodeSelector, affinity)
	}
}

// unschedulableTaint is how kube-scheduler sees a cordoned node: a pod
// that tolerates it may still land there.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// admits reports whether a pod with the requirement may be scheduled to the
// node at all, as Karmada's estimator's node filter decides: the node is
// Ready, its cordon and its NoSchedule and NoExecute taints are tolerated,
// and its labels (and name, for matchFields) match the node selector and
// the required node affinity. A node that is not Ready is left out too:
// kube-controller-manager taints it, but a member without one (or before it
// does) must not count a node kube-scheduler would skip.
func (r *Requirement) admits(nd *node) bool {
	if !nd.ready {
		return false
	}
	if nd.unschedulable && !schedcorev1.TolerationsTolerateTaint(logr.Discard(), r.tolerations, &unschedulableTaint, false) {
		return false
	}
	if nd.tainted {
		if _, untolerated := schedcorev1.FindMatchingUntoleratedTaint(logr.Discard(), nd.obj.Spec.Taints, r.tolerations, doNotSchedule, false); untolerated {
			return false
		}
	}
	if r.constrained {
		// A selector that does not parse matches nothing, as in
		// kube-scheduler.
		ok, err := r.affinity.Match(nd.obj)
		return ok && err == nil
	}
	return true
}

func doNotSchedule(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// MaxReplicas is how many replicas with the requirement the member can
// start, node by node: the sum, over the nodes that admit the replica, of
// the smaller of the node's free pod slots and, per requested resource,
// its free amount divided by the request (Karmada's MaxDivided). A node
// that does not report a requested resource holds none. The result is
// capped at math.MaxInt32.
func (n *Nodes) MaxReplicas(r *Requirement) int32 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if r.key == "" {
		return clamp(n.walk(r, nil))
	}
	if e, ok := n.memoEntries()[r.hash]; ok && e.r.key == r.key {
		// Two keys whose hashes collide share a slot; the later one wins it.
		return clamp(e.total)
	}
	// No writer runs while mu is held for reading, so the entry is
	// complete and current when it joins the memo; every later change
	// keeps it so (Nodes.refit).
	e := &memoEntry{r: r, fit: make([]int64, len(n.list))}
	e.total = n.walk(r, e.fit)
	n.memoMu.Lock()
	old := n.memoEntries()
	next := make(map[uint64]*memoEntry, len(old)+1)
	if len(old) < maxMemo {
		maps.Copy(next, old)
	}
	next[r.hash] = e
	n.memo.Store(&next)
	n.memoMu.Unlock()
	return clamp(e.total)
}

// walk is the sum of the fits over every node, each also written to fit
// by position when fit is not nil (-1 for a node that does not admit the
// requirement). Call with mu held.
func (n *Nodes) walk(r *Requirement, fit []int64) int64 {
	var total int64
	for i := range n.list {
		nd := &n.list[i]
		f := int64(-1)
		if r.admits(nd) {
			f = nd.fits(r)
			total += f
		}
		if fit != nil {
			fit[i] = f
		} else if total >= math.MaxInt32 {
			return total
		}
	}
	return total
}

func clamp(n int64) int32 {
	return int32(min(n, math.MaxInt32))
}

// noPods is the usage of a node no pod is bound to.
var noPods amounts

// fits is how many replicas the node holds. Call with Nodes.mu held.
func (nd *node) fits(r *Requirement) int64 {
	u := nd.used
	if u == nil {
		u = &noPods
	}
	best := nd.allocatable.pods - u.pods
	for _, w := range r.wants {
		var free int64
		switch w.name {
		case corev1.ResourceCPU:
			free = nd.allocatable.cpu - u.cpu
		case corev1.ResourceMemory:
			free = nd.allocatable.memory - u.memory
		default:
			have, ok := nd.allocatable.get(w.name)
			if !ok {
				return 0
			}
			used, _ := u.get(w.name)
			free = have - used
		}
		best = min(best, free/w.n)
		if best <= 0 {
			return 0
		}
	}
	return max(best, 0)
}
