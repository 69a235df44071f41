package webhook

import (
	"context"
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// DefaultMaxInFlight is Options.MaxInFlight's default: enough for the
// host's bursts of policy and Work writes, few enough that customization
// scripts (each bounded by the interpreter's budgets) cannot take every
// core of a replica at once.
const DefaultMaxInFlight = 8

// inFlightLimit bounds the admission reviews the handlers work on at once.
// A review beyond the bound is answered at once with 429 rather than
// queued: a queue would only grow while the host waits on its timeout,
// and the host's own retry (or the client's) is the right place to wait.
type inFlightLimit chan struct{}

func newInFlightLimit(n int) inFlightLimit {
	if n <= 0 {
		n = DefaultMaxInFlight
	}
	return make(inFlightLimit, n)
}

// wrap returns h behind the limit.
func (l inFlightLimit) wrap(h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		select {
		case l <- struct{}{}:
			defer func() { <-l }()
			return h.Handle(ctx, req)
		default:
			return admission.Errored(http.StatusTooManyRequests,
				fmt.Errorf("the flotilla webhook is busy: %d admission reviews are in flight; retry", cap(l)))
		}
	})
}
