package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/status"
)

// Staged says how ApplyStaged rolls the first planned template (the
// workload) out: the plan's stages and what each cluster runs now.
type Staged struct {
	// Shown are the stages the plan showed, names and clusters, in order.
	// ApplyStaged plans the workload again and refuses, as a stale plan,
	// when its stages differ; the gates and batches are the policy's.
	Shown []policy.Stage
	// Running is the render.AnnotationRenderedHash each cluster runs now,
	// as the front end recorded it; a cluster missing runs nothing yet.
	// A cluster whose hash equals the planned one is not updated again
	// (its batch is still gated, without a bake).
	Running map[string]string
	// Previous is the object each cluster ran before, for Rollback. A
	// cluster missing from Running ran nothing, and rollback removes the
	// object there; one in Running but missing here is not known (a Secret
	// whose recorded values are hashed) and is left as it is, with an error.
	Previous map[string]*unstructured.Unstructured
	// Progress, when set, is told about every step and every poll of a gate.
	Progress func(StagedProgress)
}

// StagedProgress is one event of a staged rollout, for logs.
type StagedProgress struct {
	// Step is the batch the event is about.
	Step policy.Step
	// Updated are the step's clusters updated in this call.
	Updated []string
	// Gate is the latest poll of the step's gate; nil when the step starts.
	Gate *status.Progress
}

// StagedResult is what ApplyStaged did.
type StagedResult struct {
	// Applied is Apply's result, summed over the steps.
	Applied []Applied
	// Updated are the placed clusters that run the planned rendering of the
	// workload now: updated by this call, or running it already. The others
	// run what Running says (or, rolled back, what Previous says).
	Updated []string
	// RolledBack are the clusters a failed gate put back on Previous (or
	// whose object it removed).
	RolledBack []string
	// Health is the last gate's aggregated health.
	Health health.Aggregated
	// Gated lists, in order, the steps whose gate passed.
	Gated []policy.Step
}

// GateError is a staged rollout that stopped at a failed gate.
type GateError struct {
	// Template names the workload.
	Template string
	// Step is the batch whose gate failed.
	Step policy.Step
	// Updated are the step's clusters this call updated.
	Updated []string
	// RolledBack are the clusters put back on their previous rendering.
	RolledBack []string
	// Pending are the clusters of later steps, which keep what they run.
	Pending []string
	// Err is the gate's failure: a *status.WaitError or *status.BakeError
	// naming the unhealthy clusters and why, or a rollback failure.
	Err error
}

func (e *GateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rollout of %s halted at %s (clusters %s): %v", e.Template, e.Step, strings.Join(e.Step.Clusters, ", "), e.Err)
	if len(e.RolledBack) > 0 {
		fmt.Fprintf(&b, "; rolled back to the previous rendering: %s", strings.Join(e.RolledBack, ", "))
	}
	if len(e.Pending) > 0 {
		fmt.Fprintf(&b, "; not started, keeping what they run: %s", strings.Join(e.Pending, ", "))
	}
	return b.String()
}

// Unwrap returns the gate's failure.
func (e *GateError) Unwrap() error { return e.Err }

// ApplyStaged applies planned as Apply does, but the workload
// (planned[0]) stage by stage: each step (a batch of a stage) updates the
// clusters of the batch whose running rendering differs from the planned
// one, then waits on the stage's gate over the whole batch (the clusters
// updated before included), within the gate's timeout and ctx. The first
// step also applies the dependencies (planned[1:]) everywhere and prunes
// the clusters the templates left, as Apply does. A failed gate stops the
// rollout with a *GateError; with Rollback, the batch's updated clusters
// first go back to Previous. A stale plan stops it with Apply's
// *StalePlanError. Whatever was done is always in the result.
func (e *Engine) ApplyStaged(ctx context.Context, fleet Fleet, planned []Planned, s Staged) (StagedResult, error) {
	var res StagedResult
	if len(planned) == 0 {
		return res, errors.New("staged apply: nothing planned")
	}
	main := planned[0]
	results, _ := e.Plan(ctx, fleet, []*unstructured.Unstructured{main.Template}, []Previous{{Placement: main.Placement, AffinityTerm: main.AffinityTerm}})
	if err := compareStages(s.Shown, results[0]); err != nil {
		return res, err
	}
	steps := policy.Steps(results[0].Stages)
	onFailure := results[0].Rollout.FailureAction()
	placed := make([]string, 0, len(main.Placement))
	for _, tc := range main.Placement {
		placed = append(placed, tc.Name)
	}
	updated := map[string]bool{}
	for _, c := range placed {
		if h, ok := s.Running[c]; ok && h == main.Hashes[c] {
			updated[c] = true
		}
	}
	finish := func() StagedResult {
		res.Updated = sortedKeys(updated)
		// The status covers every placed cluster, not only the last gate's.
		fresh := e.executor(fleet.Members)
		fresh.Reads = nil
		opts := status.Options{Template: main.Template, Clusters: without(placed, main.Suspended), Interpreter: fleet.Interpreter}
		if agg, err := status.Poll(ctx, opts, fresh.ObserveLive); err == nil {
			res.Health = agg
		}
		return res
	}
	if len(steps) == 0 {
		// Nothing is placed: one apply prunes what the templates left.
		out, err := e.Apply(ctx, fleet, planned)
		res.Applied = out
		return finish(), err
	}
	applied := slices.Clone(main.Applied)
	for i, step := range steps {
		var targets []string
		for _, c := range step.Clusters {
			if !updated[c] && !slices.Contains(main.Suspended, c) {
				targets = append(targets, c)
			}
		}
		this := slices.Clone(planned)
		if i > 0 {
			this = this[:1] // the dependencies went with the first step
		}
		this[0].Applied = applied
		this[0].Hold = without(placed, targets)
		e.progress(s, StagedProgress{Step: step, Updated: targets})
		out, err := e.Apply(ctx, fleet, this)
		res.Applied = mergeApplied(res.Applied, out)
		if len(out) > 0 {
			applied = out[0].Clusters
			for _, c := range targets {
				if appliedTo(out[0], c) {
					updated[c] = true
				}
			}
		}
		if err != nil {
			return finish(), err
		}
		gated := without(step.Clusters, main.Suspended)
		bake := step.Gate.Bake()
		if len(targets) == 0 {
			bake = 0 // nothing changed in this batch: it only has to be healthy
		}
		opts := status.Options{Template: main.Template, Clusters: gated, Timeout: step.Gate.Timeout(), Tolerate: step.Gate.MaxUnhealthy(), Interpreter: fleet.Interpreter}
		fresh := e.executor(fleet.Members)
		fresh.Reads = nil
		agg, err := status.Gate(ctx, opts, bake, fresh.ObserveLive, func(p status.Progress) {
			e.progress(s, StagedProgress{Step: step, Updated: targets, Gate: &p})
		})
		res.Health = agg
		if err != nil {
			gerr := &GateError{Template: main.Template.GetKind() + " " + objectName(main.Template), Step: step, Updated: targets, Err: err}
			for _, later := range steps[i+1:] {
				gerr.Pending = append(gerr.Pending, without(later.Clusters, sortedKeys(updated))...)
			}
			if onFailure == api.RolloutRollback && len(targets) > 0 {
				back, rerr := e.rollBack(ctx, fleet, main, targets, s)
				for _, c := range back {
					delete(updated, c)
				}
				res.RolledBack, gerr.RolledBack = back, back
				if rerr != nil {
					gerr.Err = errors.Join(err, rerr)
				}
			}
			return finish(), gerr
		}
		res.Gated = append(res.Gated, step)
	}
	return finish(), nil
}

// rollBack puts clusters back on their previous object, or removes the
// object where there was none. It returns the clusters it succeeded on.
func (e *Engine) rollBack(ctx context.Context, fleet Fleet, main Planned, clusters []string, s Staged) ([]string, error) {
	defer e.reads.Reset()
	ref := api.TemplateRefOf(main.Template)
	req := execution.ApplyRequest{Template: ref, Objects: map[string]*unstructured.Unstructured{}, ConflictResolution: api.ConflictAbort,
		RetainMemberFields: true, Interpreter: fleet.Interpreter}
	var remove, known []string
	var errs []error
	for _, c := range clusters {
		_, ran := s.Running[c]
		switch obj := s.Previous[c]; {
		case obj != nil:
			req.Objects[c] = obj
			known = append(known, c)
		case !ran:
			remove = append(remove, c)
			known = append(known, c)
		default:
			errs = append(errs, fmt.Errorf("roll back cluster %s: what it ran before is not recorded in full (its values are hashed), so it keeps the new rendering", c))
		}
	}
	clusters = known
	var back []string
	var outcome execution.Result
	if len(req.Objects) > 0 {
		outcome = e.executor(fleet.Members).ApplyBatch(ctx, []execution.ApplyRequest{req})
	}
	if len(remove) > 0 {
		del := e.executor(fleet.Members).Delete(ctx, execution.DeleteRequest{Template: ref, Clusters: remove})
		outcome.Outcomes = append(outcome.Outcomes, del.Outcomes...)
	}
	for _, c := range clusters {
		o, ok := outcome.Find(c, ref)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("roll back cluster %s: no outcome reported", c))
		case o.Err != nil || o.Action == execution.ActionFailed || o.Action == execution.ActionSkipped:
			errs = append(errs, fmt.Errorf("roll back cluster %s: %w", c, o.Err))
		default:
			back = append(back, c)
		}
	}
	return back, errors.Join(errs...)
}

// appliedTo reports whether a's object was applied to cluster without error.
func appliedTo(a Applied, cluster string) bool {
	for _, o := range a.Outcomes {
		if o.Cluster == cluster && o.Object.SameTemplate(a.Result.Template) {
			return o.Action == execution.ActionApplied && o.Err == nil
		}
	}
	return false
}

// mergeApplied sums a step's results into the ones before: the latest
// result and clusters (each step starts from the clusters the one before
// left), every outcome, every error.
func mergeApplied(sum, step []Applied) []Applied {
	if sum == nil {
		return step
	}
	for i := range step {
		if i >= len(sum) {
			sum = append(sum, step[i])
			continue
		}
		sum[i].Result, sum[i].Clusters = step[i].Result, step[i].Clusters
		sum[i].Outcomes = append(sum[i].Outcomes, step[i].Outcomes...)
		sum[i].Err = errors.Join(sum[i].Err, step[i].Err)
	}
	return sum
}

// without is list minus drop, in list's order.
func without(list, drop []string) []string {
	var out []string
	for _, c := range list {
		if !slices.Contains(drop, c) {
			out = append(out, c)
		}
	}
	return out
}

// objectName is "namespace/name", or "name" when cluster-scoped.
func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func (e *Engine) progress(s Staged, p StagedProgress) {
	if s.Progress != nil {
		s.Progress(p)
	}
}

// compareStages checks the workload's stages, planned again, against the
// ones the plan showed: a cluster that moved to another stage would be
// updated at another time than the plan said.
func compareStages(shown []policy.Stage, r plan.Result) error {
	stale := &StalePlanError{Template: r.Template.Describe()}
	switch {
	case r.Err != nil:
		stale.Differences = append(stale.Differences, r.Err.Error())
	case r.Rollout == nil:
		stale.Differences = append(stale.Differences, "the claiming policy no longer has a rollout")
	default:
		was := map[string][]string{}
		for _, s := range shown {
			was[s.Name] = s.Clusters
		}
		for _, s := range r.Stages {
			if old, ok := was[s.Name]; !ok {
				stale.Differences = append(stale.Differences, fmt.Sprintf("stage %s was not planned", s.Name))
			} else if !slices.Equal(old, s.Clusters) {
				stale.Differences = append(stale.Differences, fmt.Sprintf("stage %s was planned with clusters %v and would now have %v", s.Name, old, s.Clusters))
			}
			delete(was, s.Name)
		}
		for _, name := range sortedKeys(was) {
			stale.Differences = append(stale.Differences, fmt.Sprintf("stage %s was planned and is no longer in the rollout", name))
		}
	}
	if len(stale.Differences) > 0 {
		return stale
	}
	return nil
}
