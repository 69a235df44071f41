package testkit_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	start := time.Now()
	testkit.EventuallyEvery(t, time.Millisecond, time.Minute, "third call", func() (bool, string) {
		calls++
		return calls == 3, "not yet"
	})
	if calls != 3 {
		t.Errorf("condition checked %d times, want 3 (it held on the third)", calls)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("returned after %v, want soon after the condition held", d)
	}
}

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

func TestEventuallyFailsWithTheLastReason(t *testing.T) {
	r := &fatalRecorder{TB: t}
	calls := 0
	testkit.EventuallyEvery(r, time.Millisecond, 50*time.Millisecond, "never", func() (bool, string) {
		calls++
		return false, fmt.Sprintf("call %d", calls)
	})
	if want := fmt.Sprintf("never: not reached within 50ms: call %d", calls); r.msg != want {
		t.Errorf("failure %q, want %q", r.msg, want)
	}
}

func TestFreeAddrIsFreeLoopback(t *testing.T) {
	addr := testkit.FreeAddr(t)
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("FreeAddr = %q (%v), want 127.0.0.1:<port>", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the free address %s: %v", addr, err)
	}
	_ = l.Close()
	if p := testkit.FreePort(t); p <= 0 || p > 65535 {
		t.Errorf("FreePort = %d, want a port number", p)
	}
}
