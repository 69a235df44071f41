package shared

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMemberSlots(t *testing.T) {
	s := NewMemberSlots(2)
	for i, want := range []bool{true, true, false} {
		if got := s.acquire("stalled"); got != want {
			t.Fatalf("acquire %d on stalled = %v, want %v", i, got, want)
		}
	}
	if !s.acquire("healthy") {
		t.Fatalf("a full member took another member's slot")
	}
	s.release("stalled")
	if !s.acquire("stalled") {
		t.Fatalf("a released slot was not given out again")
	}
	s.release("stalled")
	s.release("stalled")
	s.release("healthy")
	if len(s.busy) != 0 {
		t.Errorf("slots left busy after every release: %v", s.busy)
	}
	if z := NewMemberSlots(0); !z.acquire("a") || z.acquire("a") {
		t.Errorf("a limit of 0 must mean one slot")
	}
}

func TestOnMember(t *testing.T) {
	s := NewMemberSlots(1)
	busy, err := OnMember(t.Context(), s, "east", 50*time.Millisecond, func(ctx context.Context) error {
		if again, _ := OnMember(t.Context(), s, "east", time.Second, func(context.Context) error { return nil }); !again {
			t.Errorf("a second worker got the only slot of east")
		}
		<-ctx.Done()
		return ctx.Err()
	})
	if busy || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cluster east did not finish within the work timeout 50ms") {
		t.Errorf("onMember = %v, %v; want the work timeout named", busy, err)
	}
	if busy, err := OnMember(t.Context(), s, "east", time.Second, func(context.Context) error { return nil }); busy || err != nil {
		t.Errorf("onMember after the timeout = %v, %v; want the slot back", busy, err)
	}
}

func TestOptionsWorkers(t *testing.T) {
	o := Options{}.WithDefaults()
	if o.WorkWorkers != DefaultWorkWorkers || o.MemberWorkers != DefaultWorkWorkers/2 || o.ClusterStatusWorkers != DefaultClusterStatusWorkers {
		t.Errorf("defaults: %d work, %d per member, %d cluster status workers", o.WorkWorkers, o.MemberWorkers, o.ClusterStatusWorkers)
	}
	if err := (Options{WorkWorkers: 4, MemberWorkers: 4}).Validate(); err == nil || !strings.Contains(err.Error(), "member workers (4) must be below work workers (4)") {
		t.Errorf("Validate = %v, want member workers refused", err)
	}
	if err := (Options{WorkWorkers: 1}).Validate(); err != nil {
		t.Errorf("Validate with one worker = %v", err)
	}
}

func TestOptionsWorkRequestTimeout(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Options
		want time.Duration
	}{
		{"default", Options{}, DefaultWorkRequestTimeout},
		{"set", Options{WorkRequestTimeout: 3 * time.Second}, 3 * time.Second},
		{"capped by the work timeout", Options{WorkRequestTimeout: time.Minute, WorkTimeout: 5 * time.Second}, 5 * time.Second},
		{"default capped by a short work timeout", Options{WorkTimeout: 2 * time.Second}, 2 * time.Second},
	} {
		if got := c.in.WithDefaults().WorkRequestTimeout; got != c.want {
			t.Errorf("%s: work request timeout = %v, want %v", c.name, got, c.want)
		}
	}
	if DefaultWorkRequestTimeout*4 > DefaultWorkTimeout {
		t.Errorf("the default work request timeout %v is not well below the work timeout %v", DefaultWorkRequestTimeout, DefaultWorkTimeout)
	}
}
