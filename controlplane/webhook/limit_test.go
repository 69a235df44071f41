package webhook

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestInFlightLimit fills the limit with reviews that block, as scripts
// running to their budget would: the next review is refused at once with
// 429 instead of waiting, and once one finishes a review gets through.
func TestInFlightLimit(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	blocking := admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		started.Done()
		<-release
		return admission.Allowed("")
	})
	h := newInFlightLimit(2).wrap(blocking)
	var done sync.WaitGroup
	for range 2 {
		started.Add(1)
		done.Go(func() { h.Handle(t.Context(), admission.Request{}) })
	}
	started.Wait()

	begin := time.Now()
	resp := h.Handle(t.Context(), admission.Request{})
	if took := time.Since(begin); took > time.Second {
		t.Errorf("a review beyond the limit waited %s; it must be answered at once", took)
	}
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
		t.Errorf("a review beyond the limit: %+v, want a 429 refusal", resp.AdmissionResponse)
	}

	close(release)
	done.Wait()
	started.Add(1)
	if resp := h.Handle(t.Context(), admission.Request{}); !resp.Allowed {
		t.Errorf("after the reviews in flight finished, a review is refused: %+v", resp.Result)
	}
	if got := cap(newInFlightLimit(0)); got != DefaultMaxInFlight {
		t.Errorf("limit 0 holds %d, want the default %d", got, DefaultMaxInFlight)
	}
}
