package shared

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MemberBusyRetry is how long a Work waits when its member already has
// every worker it may have. The retry is cheap (two cached reads), and a
// healthy member's slots free up in milliseconds.
const MemberBusyRetry = time.Second

// MemberSlots bounds how many workers of one controller work on the same
// member at once. A member that accepts connections and never answers
// holds each worker that reaches it until the work timeout; without a
// bound, a handful of its Works would take every worker and stop rollouts
// to the whole fleet. It is safe for concurrent use.
type MemberSlots struct {
	limit int

	mu   sync.Mutex
	busy map[string]int
}

// NewMemberSlots gives each member at most limit of a controller's workers.
func NewMemberSlots(limit int) *MemberSlots {
	return &MemberSlots{limit: max(1, limit), busy: map[string]int{}}
}

// acquire takes one of cluster's slots. It returns false, taking nothing,
// when all are in use; otherwise the caller must call release.
func (s *MemberSlots) acquire(cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[cluster] >= s.limit {
		return false
	}
	s.busy[cluster]++
	return true
}

// release gives back a slot acquire took.
func (s *MemberSlots) release(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[cluster] <= 1 {
		delete(s.busy, cluster)
		return
	}
	s.busy[cluster]--
}

// MemberNamespaceTTL is how long the execution trusts that a member
// namespace it found or created still exists, instead of reading it before
// each Work's apply; an apply that finds it gone makes it again at once.
const MemberNamespaceTTL = 10 * time.Minute

// ResyncAfter requeues a Work after d at low priority: with thousands of
// Works resyncing, a Work whose spec or state changed (an event, at normal
// priority) is handled before them instead of behind the whole queue.
func ResyncAfter(d time.Duration) reconcile.Result {
	return reconcile.Result{RequeueAfter: d, Priority: ptr.To(handler.LowPriority)}
}

// HostWriteMargin is what a reconcile that talks to a member gets beyond
// the work timeout, for its reads and status writes on the host: the
// controller-runtime ReconciliationTimeout guardrail is the sum.
const HostWriteMargin = 30 * time.Second

// OnMember runs f with a context bounded by timeout, holding one of
// cluster's slots. busy says no slot was free (f did not run). An error
// returned once the timeout passed says so, naming the cluster.
func OnMember(ctx context.Context, slots *MemberSlots, cluster string, timeout time.Duration, f func(context.Context) error) (busy bool, err error) {
	if !slots.acquire(cluster) {
		return true, nil
	}
	defer slots.release(cluster)
	mctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = f(mctx)
	if err != nil && ctx.Err() == nil && errors.Is(mctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("cluster %s did not finish within the work timeout %s: %w", cluster, timeout, err)
	}
	return false, err
}
