package work

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestMemberSlots(t *testing.T) {
	s := newMemberSlots(2)
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
	if z := newMemberSlots(0); !z.acquire("a") || z.acquire("a") {
		t.Errorf("a limit of 0 must mean one slot")
	}
}

func TestOnMember(t *testing.T) {
	s := newMemberSlots(1)
	busy, err := onMember(t.Context(), s, "east", 50*time.Millisecond, func(ctx context.Context) error {
		if again, _ := onMember(t.Context(), s, "east", time.Second, func(context.Context) error { return nil }); !again {
			t.Errorf("a second worker got the only slot of east")
		}
		<-ctx.Done()
		return ctx.Err()
	})
	if busy || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cluster east did not finish within the work timeout 50ms") {
		t.Errorf("onMember = %v, %v; want the work timeout named", busy, err)
	}
	if busy, err := onMember(t.Context(), s, "east", time.Second, func(context.Context) error { return nil }); busy || err != nil {
		t.Errorf("onMember after the timeout = %v, %v; want the slot back", busy, err)
	}
}
