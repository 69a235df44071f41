package shared

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// DefaultScheduleBacklogHold is how many templates and bindings may wait
// for the detectors and the scheduler before the downstream writes (Works,
// and with them Work status and template status, and the scheduler's
// Events) are held back (issue 40).
const DefaultScheduleBacklogHold = 100

// backlogPoll is how often a held backlog looks whether it can let go.
const backlogPoll = 200 * time.Millisecond

// MaxBacklogHold bounds how long the backlog holds downstream writes at a
// stretch: a tenant who creates templates faster than the scheduler places
// them would otherwise keep the queues long, and with them every other
// tenant's Works, for as long as it liked. Past it the writes go as without
// the hold until the queues are short again, which re-arms the hold.
const MaxBacklogHold = 30 * time.Second

// maxDeferredEvents bounds the Events held in memory; past it they are
// recorded at once, as without the hold.
const maxDeferredEvents = 200000

// Backlog tells whether the path to "scheduled" (the detectors' binding
// writes and the scheduler's two writes per binding) has a long queue, and
// holds the writes that can wait while it has: on a cold start of 10,000
// templates the Works, Work statuses, template statuses and Events written
// meanwhile took the same host apiserver as the schedule and made every
// binding wait (issue 40). Held bindings are handed back to the binding
// controller, and held Events recorded, once the queues are short again,
// so a settled fleet is the same as without the hold. A nil Backlog, or
// one with a negative threshold, holds nothing.
type Backlog struct {
	threshold int
	maxHold   time.Duration
	now       func() time.Time

	mu          sync.Mutex
	closedSince time.Time
	queues      map[string]trackedQueue
	held        map[reconcile.Request]struct{}
	deferred    []func()
	release     chan event.GenericEvent
}

// NewBacklog holds downstream writes while more than threshold templates
// and bindings are queued; 0 means DefaultScheduleBacklogHold, a negative
// threshold holds nothing.
func NewBacklog(threshold int) *Backlog {
	if threshold == 0 {
		threshold = DefaultScheduleBacklogHold
	}
	return &Backlog{threshold: threshold, maxHold: MaxBacklogHold, now: time.Now, queues: map[string]trackedQueue{},
		held: map[reconcile.Request]struct{}{}, release: make(chan event.GenericEvent, 1024)}
}

// Released carries the bindings held back, once the queues are short
// again, for the binding controller's channel source.
func (b *Backlog) Released() <-chan event.GenericEvent {
	if b == nil {
		return nil
	}
	return b.release
}

// Len is how many templates and bindings wait in the tracked queues.
func (b *Backlog) Len() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lenLocked()
}

func (b *Backlog) lenLocked() int {
	n := 0
	for _, q := range b.queues {
		// A stopped detector's queue keeps what it held; nothing will
		// work on it.
		if !q.ShuttingDown() {
			n += q.Len()
		}
	}
	return n
}

// closedLocked reports whether downstream writes wait now: while the
// queues are long, for at most maxHold from the moment they became long.
func (b *Backlog) closedLocked() bool {
	if b.threshold < 0 || b.lenLocked() <= b.threshold {
		b.closedSince = time.Time{}
		return false
	}
	now := b.now()
	if b.closedSince.IsZero() {
		b.closedSince = now
	}
	return now.Sub(b.closedSince) < b.maxHold
}

// Hold reports whether the binding's downstream writes must wait; if so the
// binding is handed back on Released once the queues are short.
func (b *Backlog) Hold(req reconcile.Request) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closedLocked() {
		return false
	}
	b.held[req] = struct{}{}
	return true
}

// Defer runs record now if the queues are short, else once they are.
func (b *Backlog) Defer(record func()) {
	if b == nil {
		record()
		return
	}
	b.mu.Lock()
	if !b.closedLocked() || len(b.deferred) >= maxDeferredEvents {
		b.mu.Unlock()
		record()
		return
	}
	b.deferred = append(b.deferred, record)
	b.mu.Unlock()
}

// Start lets go of what is held whenever the queues are short (a
// manager.Runnable).
func (b *Backlog) Start(ctx context.Context) error {
	t := time.NewTicker(backlogPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		b.mu.Lock()
		if b.closedLocked() || (len(b.held) == 0 && len(b.deferred) == 0) {
			b.mu.Unlock()
			continue
		}
		held, deferred := b.held, b.deferred
		b.held, b.deferred = map[reconcile.Request]struct{}{}, nil
		b.mu.Unlock()
		for _, record := range deferred {
			record()
		}
		for req := range held {
			// The key is all the binding controller's mapping reads; an
			// empty namespace names a ClusterResourceBinding, as in every
			// binding request.
			obj := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
			select {
			case b.release <- event.GenericEvent{Object: obj}:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// NeedLeaderElection is true: the writes held are the leader's.
func (b *Backlog) NeedLeaderElection() bool { return true }

// trackedQueue is what the backlog reads of a controller's queue.
type trackedQueue interface {
	Len() int
	ShuttingDown() bool
}

// track counts a controller's queue in the backlog, replacing the queue of
// a controller of the same name (a detector built again).
func (b *Backlog) track(name string, q trackedQueue) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queues[name] = q
}

// PlainQueue is controller-runtime's default plain queue for a controller
// (controller.Options.NewQueue), counted in the backlog.
func (b *Backlog) PlainQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
	b.track(name, q)
	return q
}

// PriorityQueue is controller-runtime's priority queue for a controller
// (controller.Options.NewQueue), counted in the backlog. Its Len counts the
// items ready to be worked on, not those waiting out a RequeueAfter (a
// binding no cluster fits, retried every 30 s), so those never hold the
// fleet back.
func (b *Backlog) PriorityQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl })
	b.track(name, q)
	return q
}
