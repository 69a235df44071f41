package main

import (
	"math"
	rdebug "runtime/debug"
	"testing"
)

// TestTuneGC checks that the provider bounds its heap by default (a plugin
// that only raised GOGC peaked at five times its live heap) and that
// GOMEMLIMIT and GOGC set by the user win.
func TestTuneGC(t *testing.T) {
	restoreGC := rdebug.SetGCPercent(100)
	restoreLimit := rdebug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		rdebug.SetGCPercent(restoreGC)
		rdebug.SetMemoryLimit(restoreLimit)
	})
	cases := []struct {
		name, gogc, gomemlimit string
		wantPercent            int
		wantLimit              int64
	}{
		{name: "defaults", wantPercent: 400, wantLimit: providerMemoryLimit},
		{name: "GOMEMLIMIT set", gomemlimit: "1GiB", wantPercent: 400, wantLimit: math.MaxInt64},
		{name: "GOGC set", gogc: "100", wantPercent: 100, wantLimit: providerMemoryLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The runtime read these variables at start; what matters
			// here is what tuneGC does when it sees them.
			t.Setenv("GOGC", c.gogc)
			t.Setenv("GOMEMLIMIT", c.gomemlimit)
			rdebug.SetGCPercent(100)
			rdebug.SetMemoryLimit(math.MaxInt64)
			tuneGC()
			if got := rdebug.SetGCPercent(100); got != c.wantPercent {
				t.Errorf("GC percent = %d, want %d", got, c.wantPercent)
			}
			if got := rdebug.SetMemoryLimit(math.MaxInt64); got != c.wantLimit {
				t.Errorf("memory limit = %d, want %d", got, c.wantLimit)
			}
		})
	}
}
