package status

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// DefaultInterval is the time between polls when Options.Interval is zero.
const DefaultInterval = 2 * time.Second

// ReadFunc reads objects back from their members, one Observation per
// request, in request order: execution.Executor's ObserveLive, with no
// read cache (each poll must see the members as they are now). It does not
// fail as a whole: a member that cannot be read is an Observation with Err
// set.
type ReadFunc func(ctx context.Context, reqs []execution.ObserveRequest) []execution.Observation

// Options says what to wait for.
type Options struct {
	// Template is the resource template the members' objects were rendered
	// from. Its apiVersion, kind, namespace and name identify the objects;
	// its generation and status feed health.Aggregate. Wait takes every
	// member's object to be rendered from this template as given (the
	// caller has just applied it), so the template's generation is each
	// member's ResourceTemplateGeneration. Required.
	Template *unstructured.Unstructured
	// Clusters are the members the object was applied to.
	Clusters []string
	// Interval is the time between polls, and so the most often progress is
	// reported; zero means DefaultInterval.
	Interval time.Duration
	// Timeout bounds the wait in addition to ctx; zero leaves it to ctx.
	Timeout time.Duration
	// Tolerate is how many members may be not healthy for the wait to be
	// done (a rollout gate's maxUnhealthyClusters); 0 waits for all.
	Tolerate int
	// Interpreter judges health and aggregates status: the built-in rules
	// extended by resource interpreter customizations; nil for the
	// built-in rules only.
	Interpreter *interpret.Interpreter
}

// Progress is reported after every poll that found a member not healthy.
type Progress struct {
	// Object names the template, as "Deployment default/web".
	Object string
	// Elapsed is the time since Wait started.
	Elapsed time.Duration
	// Aggregated is the poll's result.
	Aggregated health.Aggregated
}

// NotReady lists the members that are not healthy yet, with their reasons.
func (p Progress) NotReady() []health.ClusterStatus { return p.Aggregated.NotHealthy() }

// String reads "waiting for Deployment default/web: member2: 1/3 replicas
// available; member3: unreachable: …".
func (p Progress) String() string {
	return "waiting for " + p.Object + ": " + health.Summary(p.NotReady())
}

// WaitError is returned when the wait ends before every member is healthy.
type WaitError struct {
	// Object names the template, as "Deployment default/web".
	Object string
	// After is how long the wait lasted: the timeout when it timed out.
	After time.Duration
	// NotReady lists the members that were not healthy at the last
	// complete poll, with their reasons.
	NotReady []health.ClusterStatus
	// Err is context.DeadlineExceeded or context.Canceled.
	Err error
}

// Error reads "timed out after 2m0s waiting for Deployment default/web:
// member2: 1/3 replicas available; member3: not found".
func (e *WaitError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s waiting for %s: %s", e.After, e.Object, health.Summary(e.NotReady))
	}
	return fmt.Sprintf("stopped waiting for %s after %s (%v): %s", e.Object, e.After, e.Err, health.Summary(e.NotReady))
}

// Unwrap returns the context error, so errors.Is(err,
// context.DeadlineExceeded) tells a timeout.
func (e *WaitError) Unwrap() error { return e.Err }

// Wait polls the members until the template's object is Healthy in every
// one of them, and returns the aggregated health and status. It reads once
// at once, then every Interval; after each poll that is not done it calls
// progress (which may be nil). A member that is unreachable or lacks the
// object is Unknown and is waited for, like one that is still rolling out.
//
// When ctx or Timeout ends first, Wait returns the last complete poll's
// result and a *WaitError naming the members that were not ready. A poll
// cut short by the deadline is dropped, so the error says what the members
// last reported rather than that the read was interrupted. With no
// clusters there is nothing to wait for, and Wait returns at once.
func Wait(ctx context.Context, opts Options, read ReadFunc, progress func(Progress)) (health.Aggregated, error) {
	return wait(ctx, opts, read, progress, false)
}

// wait is Wait; gate also requires each member's rollout to be complete
// (health.Gated), as a rollout gate does.
func wait(ctx context.Context, opts Options, read ReadFunc, progress func(Progress), gate bool) (health.Aggregated, error) {
	if opts.Template == nil {
		return health.Aggregated{}, errors.New("wait for rollout: no template given")
	}
	object := describe(opts.Template)
	if read == nil {
		return health.Aggregated{}, fmt.Errorf("wait for %s: no read function given", object)
	}
	interval := opts.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	clusters := slices.Clone(opts.Clusters)
	slices.Sort(clusters)
	clusters = slices.Compact(clusters)
	if len(clusters) == 0 {
		return aggregate(opts.Interpreter, opts.Template, nil, nil, gate)
	}

	start := time.Now()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(opts.Timeout))
		defer cancel()
	}
	reqs := make([]execution.ObserveRequest, len(clusters))
	for i, cluster := range clusters {
		reqs[i] = execution.ObserveRequest{Cluster: cluster, Object: opts.Template}
	}
	var last health.Aggregated
	for polled := false; ; polled = true {
		observations := read(ctx, reqs)
		if ctx.Err() == nil || !polled {
			var err error
			if last, err = aggregate(opts.Interpreter, opts.Template, clusters, observations, gate); err != nil {
				// A failing aggregation script fails the same way on
				// every poll: waiting longer cannot help.
				return last, fmt.Errorf("wait for %s: %w", object, err)
			}
		}
		if passes(last, opts.Tolerate) {
			return last, nil
		}
		if ctx.Err() != nil {
			return last, stopped(ctx, object, start, last)
		}
		if progress != nil {
			progress(Progress{Object: object, Elapsed: time.Since(start), Aggregated: last})
		}
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return last, stopped(ctx, object, start, last)
		case <-timer.C:
		}
	}
}

// aggregate judges one poll. A cluster the read function did not answer for
// is Unknown, so a faulty ReadFunc cannot make a wait succeed; so is one
// whose customized status reflection fails, with the error as its reason.
// A failing customized status aggregation is the error, with the status
// left out (nil) and the whole Unknown. With gate, a member also needs its
// rollout complete (health.Gated on the live object).
func aggregate(in *interpret.Interpreter, template *unstructured.Unstructured, clusters []string, observations []execution.Observation, gate bool) (health.Aggregated, error) {
	byCluster := make(map[string]execution.Observation, len(observations))
	for _, o := range observations {
		byCluster[o.Cluster] = o
	}
	generation := template.GetGeneration()
	items := make([]health.ClusterStatus, 0, len(clusters))
	for _, cluster := range clusters {
		o, ok := byCluster[cluster]
		switch {
		case !ok:
			items = append(items, notObserved(cluster, "not read", generation))
		case o.Err != nil:
			items = append(items, notObserved(cluster, readFailure(o.Err), generation))
		default: // a NotFound observation has no Live object
			cs, err := health.ObserveWith(in, cluster, o.Live, generation)
			if err != nil {
				cs.Health, cs.Message = health.Unknown, err.Error()
			}
			if gate {
				cs = health.Gated(cs, o.Live)
			}
			items = append(items, cs)
		}
	}
	out, err := health.AggregateWith(in, template, items)
	if err != nil {
		out.Health = health.Unknown
	}
	return out, err
}

func notObserved(cluster, why string, templateGeneration int64) health.ClusterStatus {
	return health.ClusterStatus{
		Cluster: cluster, AppliedMessage: why, Health: health.Unknown, Message: why,
		ResourceTemplateGeneration: templateGeneration,
	}
}

// readFailure says why a member could not be read. An answer from the
// apiserver (forbidden, unknown resource) is a read failure; anything else
// means the member was not reached. The error is cut to its cause: the
// member and object it names are the observation's, and a transport
// error's request URL adds length, not meaning.
func readFailure(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if e, ok := status.(error); ok {
			return "read failed: " + e.Error()
		}
		return "read failed: " + err.Error()
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return "unreachable: " + urlErr.Err.Error()
	}
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	return "unreachable: " + err.Error()
}

func stopped(ctx context.Context, object string, start time.Time, last health.Aggregated) error {
	after := time.Since(start)
	if deadline, ok := ctx.Deadline(); ok && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		after = deadline.Sub(start)
	}
	if after >= 10*time.Second {
		after = after.Round(time.Second)
	} else {
		after = after.Round(time.Millisecond)
	}
	return &WaitError{Object: object, After: after, NotReady: last.NotHealthy(), Err: ctx.Err()}
}

// describe names a template as "Deployment default/web", or "Namespace
// web" when cluster-scoped.
func describe(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return obj.GetKind() + " " + ns + "/" + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetName()
}
