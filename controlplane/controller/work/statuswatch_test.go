package work

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recordingQueue is a real work queue that also records each add (0) and
// each add put off (its delay).
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	delays []time.Duration
}

func (q *recordingQueue) Add(r reconcile.Request) {
	q.delays = append(q.delays, 0)
	q.TypedRateLimitingInterface.Add(r)
}

func newRecordingEvents(t *testing.T) (*statusEvents, *recordingQueue) {
	q := &recordingQueue{TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())}
	t.Cleanup(q.ShutDown)
	e := newStatusEvents(nil, "test", "flotilla")
	e.later = func(d time.Duration, _ func()) { q.delays = append(q.delays, d) }
	var iface workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	e.queue.Store(&iface)
	return e, q
}

// TestStatusEventsCoalescePerWork: changes of one Work's object are read
// at once, then at most once per statusEventInterval; a change before a
// read already due is left to it.
func TestStatusEventsCoalescePerWork(t *testing.T) {
	e, q := newRecordingEvents(t)
	key := types.NamespacedName{Namespace: "flotilla-es-a", Name: "web"}
	t0 := time.Now()
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	for _, at := range []int{0, 200, 500, 1500, 1600, 3000} {
		e.add("a", key, ms(at))
	}
	// 0: at once; 200: due at 1000; 500: covered by 1000; 1500: due at
	// 2000; 1600: covered by 2000; 3000: at once.
	want := []time.Duration{0, 800 * time.Millisecond, 500 * time.Millisecond, 0}
	if fmt.Sprint(q.delays) != fmt.Sprint(want) {
		t.Fatalf("delays %v, want %v", q.delays, want)
	}
}

// TestStatusEventsMemberRate: one member's changes of many Works are read
// at once up to the burst, then at the member's rate; another member's are
// not held back by them.
func TestStatusEventsMemberRate(t *testing.T) {
	e, q := newRecordingEvents(t)
	now := time.Now()
	for i := range memberEventBurst + 2 {
		e.add("noisy", types.NamespacedName{Namespace: "flotilla-es-noisy", Name: fmt.Sprint(i)}, now)
	}
	e.add("quiet", types.NamespacedName{Namespace: "flotilla-es-quiet", Name: "web"}, now)
	step := time.Second / memberEventRate
	got := q.delays[memberEventBurst-1:]
	want := []time.Duration{0, step, 2 * step, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delays from the burst's last on %v, want %v", got, want)
	}
}

// TestStatusEventsChangeWhileQueued: a change that comes while its Work is
// queued but not yet read gets a read of its own after the coalescing
// interval, in the controller's priority queue too, which folds a delayed
// add into a waiting one (the read then came before the change).
func TestStatusEventsChangeWhileQueued(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test-status-events")
	t.Cleanup(q.ShutDown)
	e := newStatusEvents(nil, "test", "flotilla")
	var iface workqueue.TypedRateLimitingInterface[reconcile.Request] = q
	e.queue.Store(&iface)
	key := types.NamespacedName{Namespace: "flotilla-es-a", Name: "web"}
	e.add("a", key, time.Now())
	// Queued, not yet read: the object changes again.
	e.add("a", key, time.Now())
	item, _ := q.Get()
	q.Done(item)
	deadline := time.Now().Add(3 * statusEventInterval)
	for q.Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no read of work %s queued after the change that came while it was queued", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
