package execution

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// phase orders the objects sent to one cluster: namespaces, then
// CustomResourceDefinitions, then cluster-scoped objects, then namespaced
// objects. Removal runs in the reverse order, so instances go before the
// definitions of their kinds and everything before its namespace.
type phase int

const (
	phaseNamespace phase = iota
	phaseCRD
	phaseClusterScoped
	phaseNamespaced
)

func phaseOf(ref api.TemplateRef) phase {
	switch {
	case ref.Group == "" && ref.Kind == "Namespace":
		return phaseNamespace
	case ref.Group == "apiextensions.k8s.io" && ref.Kind == "CustomResourceDefinition":
		return phaseCRD
	case ref.Namespace == "":
		return phaseClusterScoped
	default:
		return phaseNamespaced
	}
}

// opKind says whether an op applies or removes.
type opKind int

const (
	opApply opKind = iota
	opPrune
	opDelete
)

// op is one object to apply to or remove from one cluster.
type op struct {
	kind     opKind
	ref      api.TemplateRef
	obj      *unstructured.Unstructured // opApply only
	conflict api.ConflictResolution     // opApply only
	preserve bool                       // opPrune and opDelete
	retain   bool                       // opApply only: ApplyRequest.RetainMemberFields
	// interpreter is ApplyRequest.Interpreter (opApply only).
	interpreter *interpret.Interpreter
	// karmada is the request's Karmada take-over grant.
	karmada *KarmadaAdoption
	// invalid is set when the request itself is wrong; the op then fails
	// without a request to the cluster.
	invalid error
}

func (o op) phase() phase { return phaseOf(o.ref) }

// verb names the op in errors.
func (o op) verb() string {
	switch o.kind {
	case opPrune:
		return "prune"
	case opDelete:
		return "delete"
	default:
		return "apply"
	}
}

// Apply applies one template: its object to each cluster of req.Objects,
// and prunes it from each cluster of req.Prune.
func (e *Executor) Apply(ctx context.Context, req ApplyRequest) Result {
	return e.ApplyBatch(ctx, []ApplyRequest{req})
}

// ApplyBatch applies many templates across clusters in one call, as the
// synchronous driver does with every work of a plan. Clusters are worked on
// in parallel, at most Concurrency at a time. Within a cluster, objects go
// in phases (namespaces, CustomResourceDefinitions, cluster-scoped objects,
// namespaced objects) with missing namespaces created before the
// namespaced phase; objects of one phase go in parallel, at most
// ObjectConcurrency at a time. Prunes run last, in the reverse phase order.
func (e *Executor) ApplyBatch(ctx context.Context, reqs []ApplyRequest) Result {
	plans := map[string][]op{}
	for _, req := range reqs {
		e.planApply(plans, req)
	}
	markDuplicates(plans)
	return e.run(ctx, plans)
}

// Delete removes templates' objects from the listed clusters, in the
// reverse phase order. Only objects that carry this fleet's ownership labels
// and the same template annotation are removed; anything else is left
// alone and reported as Skipped. An object already gone is Absent.
func (e *Executor) Delete(ctx context.Context, reqs ...DeleteRequest) Result {
	plans := map[string][]op{}
	for _, req := range reqs {
		invalid := validateRef(req.Template)
		for _, cluster := range req.Clusters {
			plans[cluster] = append(plans[cluster], op{kind: opDelete, ref: req.Template, preserve: req.PreserveResourcesOnDeletion, karmada: req.Karmada, invalid: invalid})
		}
	}
	markDuplicates(plans)
	return e.run(ctx, plans)
}

// planApply adds the ops of one request to plans, flagging invalid input
// on the op it concerns.
func (e *Executor) planApply(plans map[string][]op, req ApplyRequest) {
	invalid := validateRef(req.Template)
	if invalid == nil {
		invalid = validateConflictResolution(req.ConflictResolution)
	}
	for cluster, obj := range req.Objects {
		o := op{kind: opApply, ref: req.Template, obj: obj, conflict: req.ConflictResolution, retain: req.RetainMemberFields, interpreter: req.Interpreter, karmada: req.Karmada, invalid: invalid}
		if o.invalid == nil {
			o.invalid = e.validateObject(req.Template, obj)
		}
		if o.invalid == nil && slices.Contains(req.Prune, cluster) {
			o.invalid = errors.New("the cluster is listed both to apply and to prune")
		}
		plans[cluster] = append(plans[cluster], o)
	}
	for _, cluster := range req.Prune {
		if _, ok := req.Objects[cluster]; ok {
			continue // reported on the apply op
		}
		plans[cluster] = append(plans[cluster], op{kind: opPrune, ref: req.Template, preserve: req.PreserveResourcesOnDeletion, karmada: req.Karmada, invalid: invalid})
	}
}

// markDuplicates flags every op after the first for the same object in the
// same cluster: two requests cannot both decide one object.
func markDuplicates(plans map[string][]op) {
	for _, ops := range plans {
		seen := make(map[api.TemplateRef]bool, len(ops))
		for i := range ops {
			key := ops[i].ref
			key.Version = "" // as api.TemplateRef.SameTemplate
			if seen[key] && ops[i].invalid == nil {
				ops[i].invalid = errors.New("the object appears more than once in the batch")
			}
			seen[key] = true
		}
	}
}

func validateRef(ref api.TemplateRef) error {
	if ref.Version == "" || ref.Kind == "" || ref.Name == "" {
		return fmt.Errorf("template %q: version, kind and name must be set", ref.String())
	}
	return nil
}

func validateConflictResolution(c api.ConflictResolution) error {
	switch c {
	case "", api.ConflictAbort, api.ConflictOverwrite:
		return nil
	}
	return fmt.Errorf("conflict resolution %q: want %q or %q", c, api.ConflictAbort, api.ConflictOverwrite)
}

// validateObject checks that obj is the rendered form of ref for this
// fleet, so that everything applied can be found, pruned and told apart
// from objects flotilla does not own.
func (e *Executor) validateObject(ref api.TemplateRef, obj *unstructured.Unstructured) error {
	if obj == nil {
		return errors.New("object is nil")
	}
	if got := api.TemplateRefOf(obj); got != ref {
		return fmt.Errorf("object is %s, not the template %s", got, ref)
	}
	labels, annotations := obj.GetLabels(), obj.GetAnnotations()
	if labels[render.LabelManagedBy] != render.ManagedByFlotilla || labels[render.LabelFleet] != e.Fleet ||
		labels[render.LabelTemplateID] != ref.ID() || annotations[render.AnnotationTemplate] != ref.String() {
		return fmt.Errorf("object lacks the ownership labels and annotations of fleet %q; apply only objects rendered by controlplane/render", e.Fleet)
	}
	return nil
}

// run executes the plans, one worker per cluster with at most Concurrency
// clusters at a time, and collects the outcomes by cluster name.
func (e *Executor) run(ctx context.Context, plans map[string][]op) Result {
	clusters := make([]string, 0, len(plans))
	for name := range plans {
		clusters = append(clusters, name)
		if err := e.check(); err != nil {
			for i := range plans[name] {
				plans[name][i].invalid = err
			}
		}
	}
	slices.Sort(clusters)
	outcomes := make([][]Outcome, len(clusters))
	sem := make(chan struct{}, e.concurrency())
	var wg sync.WaitGroup
	for i, name := range clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			outcomes[i] = e.runCluster(ctx, name, plans[name])
		})
	}
	wg.Wait()
	var res Result
	for _, o := range outcomes {
		res.Outcomes = append(res.Outcomes, o...)
	}
	return res
}

// group is a run of ops that may go to a cluster in parallel.
type group struct {
	kind  opKind
	phase phase
	ops   []op
}

// groups orders a cluster's ops (applies by phase, then removals by reverse
// phase, each by template within a phase) and splits them into groups.
func groups(ops []op) []group {
	ops = slices.Clone(ops)
	removal := func(o op) bool { return o.kind != opApply }
	slices.SortStableFunc(ops, func(a, b op) int {
		if c := cmpBool(removal(a), removal(b)); c != 0 {
			return c
		}
		pa, pb := a.phase(), b.phase()
		if removal(a) {
			pa, pb = pb, pa
		}
		if c := cmp.Compare(pa, pb); c != 0 {
			return c
		}
		return cmp.Compare(a.ref.String(), b.ref.String())
	})
	var out []group
	for _, o := range ops {
		if n := len(out); n > 0 && removal(out[n-1].ops[0]) == removal(o) && out[n-1].phase == o.phase() {
			out[n-1].ops = append(out[n-1].ops, o)
			continue
		}
		out = append(out, group{kind: o.kind, phase: o.phase(), ops: []op{o}})
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

// runCluster connects to one cluster and runs its ops group by group.
func (e *Executor) runCluster(ctx context.Context, cluster string, ops []op) []Outcome {
	c := &clusterRun{e: e, name: cluster, namespaces: map[string]error{}}
	if e.check() == nil { // otherwise every op is invalid
		target, err := e.connect(ctx, cluster)
		if err != nil {
			c.down = fmt.Errorf("cannot connect: %w", err)
		}
		c.target = target
	}
	var out []Outcome
	for _, g := range groups(ops) {
		if g.kind == opApply && g.phase == phaseNamespaced {
			out = append(out, c.syncNamespaces(ctx, g.ops)...)
		}
		results := make([]Outcome, len(g.ops))
		c.parallel(len(g.ops), func(i int) { results[i] = c.do(ctx, g.ops[i]) })
		if g.phase == phaseCRD && c.crdChanged.Swap(false) {
			// New, changed or removed kinds: the cached discovery no longer
			// tells the whole truth.
			c.resetMapper()
		}
		out = append(out, results...)
	}
	return out
}

// parallel calls f(0) … f(n-1) with at most ObjectConcurrency at a time.
func (c *clusterRun) parallel(n int, f func(int)) {
	sem := make(chan struct{}, c.e.objectConcurrency())
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// do runs one op and returns its outcome.
func (c *clusterRun) do(ctx context.Context, o op) Outcome {
	if o.invalid != nil {
		return Outcome{Cluster: c.name, Object: o.ref, Action: ActionFailed, Err: c.wrap(o, o.invalid)}
	}
	if o.kind == opApply {
		return c.apply(ctx, o)
	}
	return c.remove(ctx, o)
}
