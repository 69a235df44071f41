package estimator

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pods is one member's pods by the object that controls them (the
// controller owner reference the member's workload controllers set), kept
// event by event like Nodes, for the descheduler: how many of a workload's
// pods hold a node and how many kube-scheduler cannot place, without
// listing pods. A pod with no controller belongs to no workload and is not
// kept. It is safe for concurrent use.
//
// Pods are keyed by namespace and controller UID, never by labels or
// names: a pod's labels are its author's to choose, and a pod in another
// namespace may name any owner it likes, but only a pod of the workload's
// own namespace whose controller is, by UID, the workload or one of its
// ReplicaSets is counted as the workload's (Replicas).
type Pods struct {
	mu sync.RWMutex
	// pods is each kept pod by namespace/name.
	pods map[string]ownedPod
	// owners counts, per namespace and controller, the pods that hold a
	// node and the unschedulable ones with the time they became so.
	owners map[owner]*ownerPods
	// stuck is, per namespace, how many pods are unschedulable, so a
	// namespace with none is passed over without a look at its workloads.
	stuck map[string]int
}

type owner struct {
	namespace string
	uid       types.UID
}

type ownedPod struct {
	owner owner
	bound bool
	// since is when the pod became unschedulable; zero when it is not.
	since time.Time
}

type ownerPods struct {
	bound         int32
	unschedulable map[string]time.Time
}

// NewPods returns an empty Pods.
func NewPods() *Pods {
	return &Pods{pods: map[string]ownedPod{}, owners: map[owner]*ownerPods{}, stuck: map[string]int{}}
}

// PodState is what Pods keeps of one pod.
type PodState struct {
	// Namespace and Name identify the pod.
	Namespace, Name string
	// Controller is the UID of the pod's controller owner reference; empty
	// when it has none.
	Controller types.UID
	// NodeName is the node the pod is bound to; empty while it waits.
	NodeName string
	// Phase is the pod's phase; Succeeded and Failed pods count nowhere.
	Phase corev1.PodPhase
	// UnschedulableSince is when kube-scheduler found the pod
	// unschedulable (UnschedulableSince); zero when it did not.
	UnschedulableSince time.Time
}

// UnschedulableSince is when a pod became unschedulable, as Karmada's
// estimator reads it: its PodScheduled condition is False with reason
// Unschedulable, since the condition's last transition. ok is false for any
// other pod (scheduled, not yet tried, or held by a scheduling gate).
func UnschedulableSince(status *corev1.PodStatus) (since time.Time, ok bool) {
	for _, c := range status.Conditions {
		if c.Type == corev1.PodScheduled {
			if c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return c.LastTransitionTime.Time, true
			}
			return time.Time{}, false
		}
	}
	return time.Time{}, false
}

// SetPod records a pod, replacing what it recorded before.
func (p *Pods) SetPod(s PodState) {
	key := s.Namespace + "/" + s.Name
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(key)
	if s.Controller == "" || s.Phase == corev1.PodSucceeded || s.Phase == corev1.PodFailed {
		return
	}
	e := ownedPod{owner: owner{s.Namespace, s.Controller}, bound: s.NodeName != ""}
	if !e.bound && !s.UnschedulableSince.IsZero() {
		e.since = s.UnschedulableSince
	}
	if !e.bound && e.since.IsZero() {
		// Waiting for kube-scheduler's first try, or for a scheduling
		// gate: it counts nowhere, so it is not kept.
		return
	}
	o := p.owners[e.owner]
	if o == nil {
		o = &ownerPods{}
		p.owners[e.owner] = o
	}
	switch {
	case e.bound:
		o.bound++
	case !e.since.IsZero():
		if o.unschedulable == nil {
			o.unschedulable = map[string]time.Time{}
		}
		o.unschedulable[key] = e.since
		p.stuck[s.Namespace]++
	}
	p.pods[key] = e
}

// DeletePod forgets the pod namespace/name.
func (p *Pods) DeletePod(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(key)
}

func (p *Pods) drop(key string) {
	e, ok := p.pods[key]
	if !ok {
		return
	}
	delete(p.pods, key)
	o := p.owners[e.owner]
	switch {
	case e.bound:
		o.bound--
	case !e.since.IsZero():
		delete(o.unschedulable, key)
		if p.stuck[e.owner.namespace]--; p.stuck[e.owner.namespace] == 0 {
			delete(p.stuck, e.owner.namespace)
		}
	}
	if o.bound == 0 && len(o.unschedulable) == 0 {
		delete(p.owners, e.owner)
	}
}

// Stuck reports whether any pod of the namespace is unschedulable, so the
// descheduler reads a workload's ReplicaSets only where there may be
// something to move.
func (p *Pods) Stuck(namespace string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.stuck[namespace] > 0
}

// Controlled is an object with the UID of its controller owner reference
// (empty when it has none), such as a ReplicaSet and its Deployment.
type Controlled struct {
	UID, Controller types.UID
}

// WorkloadReplicas counts a workload's pods in one member.
type WorkloadReplicas struct {
	// Bound is how many hold a node (running, or starting there).
	Bound int32
	// Unschedulable is how many kube-scheduler has found unschedulable for
	// longer than the threshold.
	Unschedulable int32
}

// Replicas counts the pods of the workload whose UID in the member is
// workload, in namespace: the pods it controls itself (a StatefulSet's)
// and those of the ReplicaSets among sets that it controls (a
// Deployment's, of every revision). A pod counts as unschedulable once it
// has been so for longer than threshold at now, as Karmada's
// GetUnschedulablePodsOfWorkload counts.
func (p *Pods) Replicas(namespace string, workload types.UID, sets []Controlled, threshold time.Duration, now time.Time) WorkloadReplicas {
	if workload == "" {
		return WorkloadReplicas{}
	}
	threshold = max(threshold, 0)
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out WorkloadReplicas
	seen := map[types.UID]bool{}
	add := func(uid types.UID) {
		if seen[uid] {
			return
		}
		seen[uid] = true
		o := p.owners[owner{namespace, uid}]
		if o == nil {
			return
		}
		out.Bound += o.bound
		for _, since := range o.unschedulable {
			if since.Add(threshold).Before(now) {
				out.Unschedulable++
			}
		}
	}
	add(workload)
	for _, rs := range sets {
		if rs.Controller == workload && rs.UID != "" {
			add(rs.UID)
		}
	}
	return out
}
