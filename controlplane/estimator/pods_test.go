package estimator

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestUnschedulableSince(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cond := func(status corev1.ConditionStatus, reason string) corev1.PodStatus {
		return corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
			{Type: corev1.PodScheduled, Status: status, Reason: reason, LastTransitionTime: at},
		}}
	}
	cases := []struct {
		name   string
		status corev1.PodStatus
		ok     bool
	}{
		{"unschedulable", cond(corev1.ConditionFalse, corev1.PodReasonUnschedulable), true},
		{"scheduled", cond(corev1.ConditionTrue, ""), false},
		{"held by a scheduling gate", cond(corev1.ConditionFalse, corev1.PodReasonSchedulingGated), false},
		{"not tried yet", corev1.PodStatus{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			since, ok := UnschedulableSince(&tc.status)
			if ok != tc.ok || (ok && !since.Equal(at.Time)) {
				t.Fatalf("got %v %v, want ok=%v at %v", since, ok, tc.ok, at)
			}
		})
	}
}

// TestPodsReplicas counts a Deployment's pods in "shop" through the
// owner chain: the Deployment (uid dep) controls ReplicaSet rs1 (and rs0,
// an older revision); its pods are controlled by those. Pods that only
// look like its own, by labels, by an owner's name, or by its owners' UIDs
// from another namespace, never count.
func TestPodsReplicas(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	long, short := now.Add(-10*time.Minute), now.Add(-time.Minute)
	const threshold = 5 * time.Minute
	sets := []Controlled{{UID: "rs1", Controller: "dep"}, {UID: "rs0", Controller: "dep"}, {UID: "other-rs", Controller: "other"}}
	pending := func(ns, name string, owner types.UID, since time.Time) PodState {
		return PodState{Namespace: ns, Name: name, Controller: owner, Phase: corev1.PodPending, UnschedulableSince: since}
	}
	running := func(ns, name string, owner types.UID) PodState {
		return PodState{Namespace: ns, Name: name, Controller: owner, NodeName: "n1", Phase: corev1.PodRunning}
	}
	cases := []struct {
		name     string
		pods     []PodState
		workload types.UID
		sets     []Controlled
		want     WorkloadReplicas
	}{
		{"stuck past the threshold, of both revisions", []PodState{
			pending("shop", "a", "rs1", long), pending("shop", "b", "rs0", long), running("shop", "c", "rs1"),
		}, "dep", sets, WorkloadReplicas{Bound: 1, Unschedulable: 2}},
		{"stuck for less than the threshold", []PodState{pending("shop", "a", "rs1", short)}, "dep", sets, WorkloadReplicas{}},
		{"pending but not found unschedulable", []PodState{pending("shop", "a", "rs1", time.Time{})}, "dep", sets, WorkloadReplicas{}},
		{"terminal pods count nowhere", []PodState{
			{Namespace: "shop", Name: "a", Controller: "rs1", NodeName: "n1", Phase: corev1.PodSucceeded},
			{Namespace: "shop", Name: "b", Controller: "rs1", Phase: corev1.PodFailed, UnschedulableSince: long},
		}, "dep", sets, WorkloadReplicas{}},
		{"pods the workload controls itself (a StatefulSet's)", []PodState{
			pending("shop", "a", "dep", long), running("shop", "b", "dep"),
		}, "dep", nil, WorkloadReplicas{Bound: 1, Unschedulable: 1}},
		{"attack: another namespace's pods naming the workload's ReplicaSet and the workload by UID", []PodState{
			pending("evil", "a", "rs1", long), pending("evil", "b", "dep", long), running("evil", "c", "rs1"),
		}, "dep", sets, WorkloadReplicas{}},
		{"attack: another workload's ReplicaSet in the namespace", []PodState{pending("shop", "a", "other-rs", long)}, "dep", sets, WorkloadReplicas{}},
		{"attack: a ReplicaSet the workload does not control, listed twice", []PodState{pending("shop", "a", "rs9", long)}, "dep",
			[]Controlled{{UID: "rs9", Controller: "other"}, {UID: "rs9"}}, WorkloadReplicas{}},
		{"a pod with no controller belongs to no workload", []PodState{pending("shop", "a", "", long)}, "dep", sets, WorkloadReplicas{}},
		{"a ReplicaSet listed twice counts once", []PodState{pending("shop", "a", "rs1", long)}, "dep",
			[]Controlled{{UID: "rs1", Controller: "dep"}, {UID: "rs1", Controller: "dep"}}, WorkloadReplicas{Unschedulable: 1}},
		{"no workload UID: nothing", []PodState{pending("shop", "a", "", long)}, "", []Controlled{{UID: "x"}}, WorkloadReplicas{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPods()
			for _, s := range tc.pods {
				p.SetPod(s)
			}
			if got := p.Replicas("shop", tc.workload, tc.sets, threshold, now); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestPodsEvents follows a pod through its life: unschedulable, then
// bound, then deleted; and a pod set again replaces what it counted.
func TestPodsEvents(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sets := []Controlled{{UID: "rs1", Controller: "dep"}}
	p := NewPods()
	count := func() WorkloadReplicas { return p.Replicas("shop", "dep", sets, 0, now) }
	stuck := PodState{Namespace: "shop", Name: "a", Controller: "rs1", Phase: corev1.PodPending, UnschedulableSince: now.Add(-time.Second)}
	p.SetPod(stuck)
	p.SetPod(stuck)
	if got := count(); got != (WorkloadReplicas{Unschedulable: 1}) || !p.Stuck("shop") || p.Stuck("evil") {
		t.Fatalf("stuck pod set twice: %+v, stuck %v", got, p.Stuck("shop"))
	}
	bound := stuck
	bound.NodeName, bound.Phase = "n1", corev1.PodRunning
	p.SetPod(bound)
	if got := count(); got != (WorkloadReplicas{Bound: 1}) || p.Stuck("shop") {
		t.Fatalf("bound: %+v, stuck %v", got, p.Stuck("shop"))
	}
	// Pending again but not yet found unschedulable (a new try), while
	// another pod of the owner comes and goes: nothing is left behind.
	fresh := stuck
	fresh.UnschedulableSince = time.Time{}
	p.SetPod(fresh)
	other := bound
	other.Name = "b"
	p.SetPod(other)
	p.DeletePod("shop/b")
	if got := count(); got != (WorkloadReplicas{}) {
		t.Fatalf("waiting: %+v", got)
	}
	p.DeletePod("shop/a")
	p.DeletePod("shop/never")
	if got := count(); got != (WorkloadReplicas{}) || len(p.owners) != 0 || len(p.pods) != 0 {
		t.Fatalf("deleted: %+v, %d owners, %d pods left", got, len(p.owners), len(p.pods))
	}
}
