package cli

import (
	"context"
	"sync"
	"testing"
)

// runInProcess runs the controlplane command in-process with cfg until the
// returned stop is called or the test ends; an error the command returns
// fails the test.
func runInProcess(t *testing.T, cfg controlplaneConfig) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runControlplane(ctx, cfg) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("controlplane: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
