package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
)

// passes reports whether a poll is done: healthy overall, or with at most
// tolerate members not healthy (and a status that could be aggregated).
func passes(agg health.Aggregated, tolerate int) bool {
	if agg.Health == health.Healthy {
		return true
	}
	return tolerate > 0 && len(agg.Clusters) > 0 && len(agg.NotHealthy()) <= tolerate
}

// BakeError is returned when a member turns unhealthy during a gate's bake
// time, after the gate's wait had passed.
type BakeError struct {
	// Object names the template, as "Deployment default/web".
	Object string
	// Into is how far into the bake the failing poll was.
	Into time.Duration
	// Bake is the whole bake time.
	Bake time.Duration
	// NotReady lists the members that were not healthy at that poll.
	NotReady []health.ClusterStatus
}

// Error reads "Deployment default/web turned unhealthy 4s into a 30s bake:
// member2: 1/3 replicas available".
func (e *BakeError) Error() string {
	return fmt.Sprintf("%s turned unhealthy %s into a %s bake: %s", e.Object, e.Into.Round(time.Second), e.Bake, health.Summary(e.NotReady))
}

// Gate is a rollout gate: Wait (with opts.Tolerate members allowed to be
// not healthy, within opts.Timeout), then bake, during which every poll
// must pass the same way. A member counts as healthy at a gate only once
// its rollout is also complete (health.Gated: `kubectl rollout status`
// beside the interpreter's health), so a 1-replica canary whose new pod is
// broken does not pass on its old pod. A poll during the bake that does not pass fails
// the gate with a *BakeError; the wait failing returns Wait's
// *WaitError. The bake is bounded by ctx, not by opts.Timeout: the timeout
// is the time allowed to become healthy. It returns the last poll's result.
func Gate(ctx context.Context, opts Options, bake time.Duration, read ReadFunc, progress func(Progress)) (health.Aggregated, error) {
	last, err := wait(ctx, opts, read, progress, true)
	if err != nil || bake <= 0 || len(opts.Clusters) == 0 {
		return last, err
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	clusters, reqs := requests(opts)
	object := describe(opts.Template)
	start := time.Now()
	end := start.Add(bake)
	for {
		timer := time.NewTimer(min(interval, max(time.Until(end), 0)))
		select {
		case <-ctx.Done():
			timer.Stop()
			return last, stopped(ctx, object+" (baking)", start, last)
		case <-timer.C:
		}
		observations := read(ctx, reqs)
		if ctx.Err() != nil {
			return last, stopped(ctx, object+" (baking)", start, last)
		}
		if last, err = aggregate(opts.Interpreter, opts.Template, clusters, observations, true); err != nil {
			return last, fmt.Errorf("wait for %s: %w", object, err)
		}
		if !passes(last, opts.Tolerate) {
			return last, &BakeError{Object: object, Into: time.Since(start), Bake: bake, NotReady: last.NotHealthy()}
		}
		if !time.Now().Before(end) {
			return last, nil
		}
	}
}

// Poll reads the members once and aggregates their health and status, as
// one poll of Wait: for a status after a rollout whose gates each judged
// part of the members.
func Poll(ctx context.Context, opts Options, read ReadFunc) (health.Aggregated, error) {
	if opts.Template == nil || read == nil {
		return health.Aggregated{}, errors.New("poll: no template or read function given")
	}
	clusters, reqs := requests(opts)
	if len(clusters) == 0 {
		return aggregate(opts.Interpreter, opts.Template, nil, nil, false)
	}
	return aggregate(opts.Interpreter, opts.Template, clusters, read(ctx, reqs), false)
}

// requests are the sorted, distinct clusters of opts and a read of the
// template's object in each.
func requests(opts Options) ([]string, []execution.ObserveRequest) {
	clusters := slices.Clone(opts.Clusters)
	slices.Sort(clusters)
	clusters = slices.Compact(clusters)
	reqs := make([]execution.ObserveRequest, len(clusters))
	for i, cluster := range clusters {
		reqs[i] = execution.ObserveRequest{Cluster: cluster, Object: opts.Template}
	}
	return clusters, reqs
}
