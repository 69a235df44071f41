package work

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

// memberBusyRetry is how long a Work waits when its member already has
// every worker it may have. The retry is cheap (two cached reads), and a
// healthy member's slots free up in milliseconds.
const memberBusyRetry = time.Second

// memberSlots bounds how many workers of one controller work on the same
// member at once. A member that accepts connections and never answers
// holds each worker that reaches it until the work timeout; without a
// bound, a handful of its Works would take every worker and stop rollouts
// to the whole fleet. It is safe for concurrent use.
type memberSlots struct {
	limit int

	mu   sync.Mutex
	busy map[string]int
}

// newMemberSlots gives each member at most limit of a controller's workers.
func newMemberSlots(limit int) *memberSlots {
	return &memberSlots{limit: max(1, limit), busy: map[string]int{}}
}

// acquire takes one of cluster's slots. It returns false, taking nothing,
// when all are in use; otherwise the caller must call release.
func (s *memberSlots) acquire(cluster string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[cluster] >= s.limit {
		return false
	}
	s.busy[cluster]++
	return true
}

// release gives back a slot acquire took.
func (s *memberSlots) release(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[cluster] <= 1 {
		delete(s.busy, cluster)
		return
	}
	s.busy[cluster]--
}

// resyncAfter requeues a Work after d at low priority: with thousands of
// Works resyncing, a Work whose spec or state changed (an event, at normal
// priority) is handled before them instead of behind the whole queue.
func resyncAfter(d time.Duration) reconcile.Result {
	return reconcile.Result{RequeueAfter: d, Priority: ptr.To(handler.LowPriority)}
}

// onMember runs f with a context bounded by timeout, holding one of
// cluster's slots. busy says no slot was free (f did not run). An error
// returned once the timeout passed says so, naming the cluster.
func onMember(ctx context.Context, slots *memberSlots, cluster string, timeout time.Duration, f func(context.Context) error) (busy bool, err error) {
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
