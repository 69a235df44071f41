package testenv

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// pollInterval is short because everything here is on loopback and a test
// waits for each step.
const pollInterval = 100 * time.Millisecond

// waitFor calls check until it succeeds. It gives up when ctx ends, or at once
// when a process in watch exits, and then names what it waited for, the last
// check error and the tail of the log of the process to blame.
func waitFor(ctx context.Context, what string, blame *process, watch []*process, check func(context.Context) error) error {
	var last error
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		for _, p := range watch {
			if gone, err := p.exited(); gone {
				return fmt.Errorf("wait for %s: %w", what, p.exitError(err))
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				// Interrupted, or a sibling failed: the logs tell nothing new.
				return fmt.Errorf("wait for %s: %w", what, context.Cause(ctx))
			}
			tail := ""
			if blame != nil {
				tail = "\n" + blame.tail(30)
			}
			return fmt.Errorf("wait for %s: %w; last error: %v%s", what, ctx.Err(), last, tail)
		case <-tick.C:
		}
	}
}

// errSiblingFailed cancels the other clusters' start when one fails, so the
// failure that matters is reported alone.
var errSiblingFailed = errors.New("another cluster failed to start")
