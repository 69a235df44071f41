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
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// Planned is one template as a front end showed it in a plan, to be applied
// exactly.
type Planned struct {
	// Template is the resource template.
	Template *unstructured.Unstructured
	// Placement is the planned cluster → replicas.
	Placement []api.TargetCluster
	// Hashes is the planned render.AnnotationRenderedHash per cluster, as
	// the plan showed it.
	Hashes map[string]string
	// Shown, when set, is how the plan showed a rendered hash: a front end
	// that must not show a plain hash of a Secret (it would let a reader
	// guess the values offline) shows a keyed one, and the fresh rendering
	// is compared through the same function.
	Shown func(hash string) string
	// Applied lists the clusters where an earlier apply may have left the
	// template's object. Those no longer placed are pruned.
	Applied []string
	// AffinityTerm is the planned clusterAffinities term; scheduling resumes
	// from it, as Karmada's does, so a feasible earlier term does not pull
	// the template back between plan and apply.
	AffinityTerm string
	// Suspended are the planned clusters the policy's suspension holds
	// back (plan.Result.Suspended): nothing is applied to or pruned from
	// them, as Karmada's execution controller skips a suspended Work.
	Suspended []string
	// Hold are planned clusters this call leaves untouched, as it does
	// suspended ones: a staged rollout (ApplyStaged) updates one batch at a
	// time, and the clusters of later batches keep what they run.
	Hold []string
	// Karmada lets the apply take over the objects a stopped Karmada
	// applied in the clusters it names (the grant of a Terraform import
	// of such an object); nil for none.
	Karmada *execution.KarmadaAdoption
}

// StalePlanError says that the fleet changed between plan and apply so that
// the plan can no longer be honoured. Nothing was applied.
type StalePlanError struct {
	// Template is the template whose plan no longer holds.
	Template string
	// Differences says what changed, one line per difference.
	Differences []string
}

func (e *StalePlanError) Error() string {
	return fmt.Sprintf("the plan for %s can no longer be honoured: %s; run the plan again",
		e.Template, strings.Join(e.Differences, "; "))
}

// Applied is what Apply did for one template.
type Applied struct {
	// Result is the plan that was applied; it equals what was planned.
	Result plan.Result
	// Clusters are the clusters where the template's object may now exist:
	// every placed cluster that was not refused, plus pruned clusters whose
	// removal failed. Record it; the next Apply prunes from it.
	Clusters []string
	// Outcomes are the execution outcomes for this template.
	Outcomes []execution.Outcome
	// Err joins the failures for this template; nil when all went well.
	Err error
}

// Apply re-plans the templates against the live fleet, with the planned
// placements as the previous result so that placements stay put, and
// refuses, applying nothing, when any placement or rendered object differs
// from what was planned (a *StalePlanError). Otherwise it applies every
// rendered object with server-side apply, except to the clusters a policy's
// suspension holds back (left untouched), and prunes clusters the templates
// left. Failures are reported per template and cluster; what was applied is
// always reported, so nothing is applied and then forgotten.
func (e *Engine) Apply(ctx context.Context, fleet Fleet, planned []Planned) ([]Applied, error) {
	templates := make([]*unstructured.Unstructured, len(planned))
	previous := make([]Previous, len(planned))
	for i, p := range planned {
		templates[i] = p.Template
		previous[i] = Previous{Placement: p.Placement, AffinityTerm: p.AffinityTerm}
	}
	results, _ := e.Plan(ctx, fleet, templates, previous)
	var stale []error
	for i, r := range results {
		if err := compare(planned[i], r); err != nil {
			stale = append(stale, err)
		}
	}
	if len(stale) > 0 {
		return nil, errors.Join(stale...)
	}
	reqs := make([]execution.ApplyRequest, len(results))
	for i, r := range results {
		reqs[i] = applyRequest(planned[i], r)
		// Retention runs the kind's customization, if the fleet has one.
		reqs[i].Interpreter = fleet.Interpreter
	}
	defer e.reads.Reset()
	outcome := e.executor(fleet.Members).ApplyBatch(ctx, reqs)
	out := make([]Applied, len(results))
	var errs []error
	for i, r := range results {
		out[i] = applied(reqs[i], r, outcome, planned[i])
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}

// compare checks a fresh plan against what was planned.
func compare(p Planned, r plan.Result) error {
	stale := &StalePlanError{Template: r.Template.Describe()}
	if r.Err != nil {
		stale.Differences = append(stale.Differences, r.Err.Error())
		return stale
	}
	want := map[string]int32{}
	for _, tc := range p.Placement {
		want[tc.Name] = tc.Replicas
	}
	got := map[string]int32{}
	for _, tc := range r.Placement {
		got[tc.Name] = tc.Replicas
	}
	for _, name := range sortedKeys(want) {
		if n, ok := got[name]; !ok {
			stale.Differences = append(stale.Differences, fmt.Sprintf("cluster %s was planned %d replicas and is no longer selected (%s)", name, want[name], reason(r, name)))
		} else if n != want[name] {
			stale.Differences = append(stale.Differences, fmt.Sprintf("cluster %s was planned %d replicas and would now get %d", name, want[name], n))
		}
	}
	for _, name := range sortedKeys(got) {
		if _, ok := want[name]; !ok {
			stale.Differences = append(stale.Differences, fmt.Sprintf("cluster %s was not planned and would now get %d replicas", name, got[name]))
		}
	}
	for _, name := range sortedKeys(p.Hashes) {
		w, ok := r.Works[name]
		if !ok {
			continue
		}
		got := w.Hash
		if p.Shown != nil {
			got = p.Shown(got)
		}
		if got != p.Hashes[name] {
			stale.Differences = append(stale.Differences, fmt.Sprintf("the object for cluster %s renders differently than planned", name))
		}
	}
	if !slices.Equal(sortedStrings(p.Suspended), sortedStrings(r.Suspended)) {
		stale.Differences = append(stale.Differences, fmt.Sprintf("dispatch was planned suspended to %v and would now be to %v", p.Suspended, r.Suspended))
	}
	if len(stale.Differences) > 0 {
		return stale
	}
	return nil
}

// sortedStrings is a sorted copy.
func sortedStrings(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

func reason(r plan.Result, cluster string) string {
	if why := r.Reasons[cluster]; why != "" {
		return why
	}
	return "no reason given"
}

func applyRequest(p Planned, r plan.Result) execution.ApplyRequest {
	req := execution.ApplyRequest{
		Template:                    api.TemplateRefOf(p.Template),
		Objects:                     make(map[string]*unstructured.Unstructured, len(r.Works)),
		ConflictResolution:          r.ConflictResolution,
		PreserveResourcesOnDeletion: r.PreserveResourcesOnDeletion,
		// A workload with the retain-replicas label (or a kind whose
		// customization retains fields) keeps what its member owns once it
		// exists there, as in continuous mode: Read leaves those fields out
		// of drift (execution.AsDeclared), so the plan shows no change for
		// them and apply must not reset them either.
		RetainMemberFields: true,
		Karmada:            p.Karmada,
	}
	for cluster, w := range r.Works {
		if !slices.Contains(r.Suspended, cluster) && !slices.Contains(p.Hold, cluster) {
			req.Objects[cluster] = w.Object
		}
	}
	for _, cluster := range p.Applied {
		if _, placed := r.Works[cluster]; !placed && !slices.Contains(req.Prune, cluster) {
			req.Prune = append(req.Prune, cluster)
		}
	}
	slices.Sort(req.Prune)
	return req
}

// applied sums up the execution outcomes of one template.
func applied(req execution.ApplyRequest, r plan.Result, outcome execution.Result, p Planned) Applied {
	a := Applied{Result: r}
	may := map[string]bool{}
	// A held-back cluster keeps whatever an earlier apply left there.
	for _, cluster := range append(slices.Clone(r.Suspended), p.Hold...) {
		if slices.Contains(p.Applied, cluster) {
			may[cluster] = true
		}
	}
	var errs []error
	for cluster := range req.Objects {
		o, ok := outcome.Find(cluster, req.Template)
		if ok {
			a.Outcomes = append(a.Outcomes, o)
		}
		switch {
		case !ok:
			may[cluster] = true
			errs = append(errs, fmt.Errorf("cluster %s: no outcome reported for %s", cluster, req.Template))
		case o.Action == execution.ActionSkipped:
			// A refused conflict: the object there is not flotilla's.
			errs = append(errs, o.Err)
		default:
			may[cluster] = true
			if o.Err != nil {
				errs = append(errs, o.Err)
			}
		}
	}
	for _, cluster := range req.Prune {
		o, ok := outcome.Find(cluster, req.Template)
		if ok {
			a.Outcomes = append(a.Outcomes, o)
		}
		if !ok || o.Action == execution.ActionFailed {
			may[cluster] = true
			if ok {
				errs = append(errs, o.Err)
			}
		}
	}
	a.Clusters = sortedKeys(may)
	a.Err = errors.Join(errs...)
	return a
}
