package shared

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// lenQueue is a queue of a fixed length: all the backlog reads of one.
type lenQueue struct{ n int }

func (q *lenQueue) Len() int           { return q.n }
func (q *lenQueue) ShuttingDown() bool { return false }

// TestBacklogHoldIsBounded: a long queue holds a binding's downstream writes,
// but never for longer than MaxBacklogHold at a stretch, so a tenant who keeps
// the scheduler's queue long cannot hold every other tenant's Works; a short
// queue re-arms the hold.
func TestBacklogHoldIsBounded(t *testing.T) {
	clock := time.Unix(1_000_000, 0)
	b := NewBacklog(10)
	b.now = func() time.Time { return clock }
	q := &lenQueue{}
	b.track("scheduler", q)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "web-deployment"}}

	steps := []struct {
		name    string
		queued  int
		advance time.Duration
		hold    bool
	}{
		{"short queue", 10, 0, false},
		{"long queue holds", 11, 0, true},
		{"still within the bound", 500, MaxBacklogHold - time.Second, true},
		{"past the bound the writes go", 500, time.Second, false},
		{"and keep going while the queue stays long", 500, time.Hour, false},
		{"a short queue re-arms", 3, 0, false},
		{"the next long queue holds again", 50, time.Second, true},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		q.n = s.queued
		if got := b.Hold(req); got != s.hold {
			t.Fatalf("%s (%d queued): Hold = %v, want %v", s.name, s.queued, got, s.hold)
		}
	}
	if NewBacklog(-1).Hold(req) {
		t.Fatal("a negative threshold must hold nothing")
	}
}
