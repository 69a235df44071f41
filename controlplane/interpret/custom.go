package interpret

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// operation is one of Karmada's customizable interpreter operations: the
// rule's field in spec.customizations and the global function its script
// defines.
type operation struct {
	field string
	fn    string
	rule  func(*api.CustomizationRules) *api.LuaScript
}

// Operations in the order of Karmada's CustomizationRules.
var (
	opRetain     = operation{"retention", "Retain", func(r *api.CustomizationRules) *api.LuaScript { return r.Retention }}
	opReplicas   = operation{"replicaResource", "GetReplicas", func(r *api.CustomizationRules) *api.LuaScript { return r.ReplicaResource }}
	opComponents = operation{"componentResource", "GetComponents", func(r *api.CustomizationRules) *api.LuaScript { return r.ComponentResource }}
	opRevise     = operation{"replicaRevision", "ReviseReplica", func(r *api.CustomizationRules) *api.LuaScript { return r.ReplicaRevision }}
	opReflect    = operation{"statusReflection", "ReflectStatus", func(r *api.CustomizationRules) *api.LuaScript { return r.StatusReflection }}
	opAggregate  = operation{"statusAggregation", "AggregateStatus", func(r *api.CustomizationRules) *api.LuaScript { return r.StatusAggregation }}
	opHealth     = operation{"healthInterpretation", "InterpretHealth", func(r *api.CustomizationRules) *api.LuaScript { return r.HealthInterpretation }}
	opDeps       = operation{"dependencyInterpretation", "GetDependencies", func(r *api.CustomizationRules) *api.LuaScript { return r.DependencyInterpretation }}
)

func operations() []operation {
	return []operation{opRetain, opReplicas, opComponents, opRevise, opReflect, opAggregate, opHealth, opDeps}
}

// script is one customized operation of one kind, compiled once.
type script struct {
	// customization is the name of the ResourceInterpreterCustomization,
	// quoted for messages; name is the name itself.
	customization string
	name          string
	kind          schema.GroupVersionKind
	op            operation
	proto         *lua.FunctionProto
	// timeout is the wall-clock deadline of one call.
	timeout time.Duration
	// guard is the Interpreter's (see lookup), told of a call that
	// exceeds a budget.
	guard Guard
	// now is the clock os.time and os.date read; nil reads FixedTime.
	now func() time.Time
}

// clock is the script's clock, FixedTime without one.
func (s *script) clock() func() time.Time {
	if s.now == nil {
		return func() time.Time { return FixedTime }
	}
	return s.now
}

// call runs the script's function with args, in a fresh state. A call
// that runs out of a budget is reported to the guard, which may refuse the
// kind from then on.
func (s *script) call(nRet int, args ...any) ([]any, error) {
	out, err := run(s, s.timeout, nRet, args...)
	if err != nil && s.guard != nil && IsBudgetExceeded(err) {
		s.guard.Exceeded(BudgetExceeded{Kind: s.kind, Customization: s.name, Operation: s.op.field, Err: err})
	}
	return out, err
}

// newScript compiles one operation of the customization name targeting kind.
func newScript(name string, kind schema.GroupVersionKind, op operation, source string, timeout time.Duration) (*script, error) {
	quoted := fmt.Sprintf("%q", name)
	proto, err := compile(op.field, source)
	if err != nil {
		return nil, &scriptError{customization: quoted, operation: op.field, err: err}
	}
	return &script{customization: quoted, name: name, kind: kind, op: op, proto: proto, timeout: timeout}, nil
}

// Option changes how New's Interpreter runs customizations.
type Option func(*options)

type options struct {
	timeout time.Duration
	now     func() time.Time
}

// WithCallTimeout sets the wall-clock deadline of one call of a
// customization's script (DefaultCallTimeout unless set; zero or less for
// none). It is a last resort: the counted budgets (InstructionBudget,
// MemoryBudget, ConversionBudget) decide every ordinary outcome the same
// way on any machine (an ordinary call takes milliseconds, and a whole
// instruction budget a fraction of a second on an idle machine), and the
// deadline stops what they cannot count, such as instructions that each
// compare two long strings, and calls on a machine loaded enough that
// their steps take longer than the deadline; such a call fails as a
// budget error (IsBudgetExceeded).
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// BudgetExceeded is a call of a customization's script that ran out of a
// budget.
type BudgetExceeded struct {
	// Kind is the kind the customization targets.
	Kind schema.GroupVersionKind
	// Customization is the customization's name.
	Customization string
	// Operation is the rule's field in spec.customizations, e.g.
	// replicaResource.
	Operation string
	// Err is the call's error; it names the budget.
	Err error
}

// Guard keeps a script that ran out of a budget from running again: an
// Interpreter given one (WithGuard) asks it before running a kind's
// customization and tells it of every call that exceeds a budget. It is
// how a long-running front end makes a hostile script cost one budget
// rather than one per call; the state lives with the caller, so the
// Interpreter stays immutable. It must be safe for concurrent use.
type Guard interface {
	// Refused returns why kind's customized operations may not run, nil
	// when they may.
	Refused(kind schema.GroupVersionKind) error
	// Exceeded is told of a call that ran out of a budget.
	Exceeded(BudgetExceeded)
}

// Interpreter is the built-in table extended by Karmada
// ResourceInterpreterCustomizations: for a kind a customization targets,
// each operation it scripts replaces the built-in rule, and every other
// operation stays built in, as Karmada's interpreter chain does
// (customized, then native). The zero value and nil interpret the built-in
// kinds only. An Interpreter is immutable and safe for concurrent use:
// each script is compiled once, by New, and every call runs the compiled
// script in a fresh sandboxed Lua VM of its own.
type Interpreter struct {
	scripts map[schema.GroupVersionKind]map[string]*script
	// broken holds, per kind, why a customization of it was refused:
	// every customizable operation of that kind then fails with it, so a
	// kind is never interpreted half by its customization and half by
	// the built-in rules.
	broken map[schema.GroupVersionKind]error
	// guard, when set, may refuse a kind whose script exceeded a budget.
	guard Guard
}

// WithGuard returns a copy of in whose customized operations consult g
// first and report to it each call that runs out of a budget. nil stays
// nil: without customizations no script runs.
func (in *Interpreter) WithGuard(g Guard) *Interpreter {
	if in == nil {
		return nil
	}
	out := *in
	out.guard = g
	return &out
}

// Refusal returns why kind's customizations were refused when they were
// loaded (see New), nil when they were not.
func (in *Interpreter) Refusal(kind schema.GroupVersionKind) error {
	if in == nil {
		return nil
	}
	return in.broken[kind]
}

// Merge returns one Interpreter with the customizations of each part, for
// parts built (by New) from the customizations of different kinds, so a
// caller can load each kind's customizations on its own. Where two parts
// hold the same kind, the later one's scripts are kept and a refusal in
// either wins. The parts' guards are dropped.
func Merge(parts ...*Interpreter) *Interpreter {
	out := &Interpreter{scripts: map[schema.GroupVersionKind]map[string]*script{}, broken: map[schema.GroupVersionKind]error{}}
	for _, p := range parts {
		if p == nil {
			continue
		}
		for gvk, ops := range p.scripts {
			out.scripts[gvk] = ops
		}
		for gvk, err := range p.broken {
			if out.broken[gvk] == nil {
				out.broken[gvk] = err
			}
		}
	}
	return out
}

// Refused returns an Interpreter in which kind fails every customizable
// operation with err and every other kind is built in: what a caller
// uses for a kind whose customizations it could not load.
func Refused(kind schema.GroupVersionKind, err error) *Interpreter {
	return &Interpreter{broken: map[schema.GroupVersionKind]error{kind: err}}
}

// New checks customizations and returns the Interpreter that runs them. It
// refuses, naming the customization and the field, one that fails
// validation, a script that does not compile, does not define its function
// or fails while loading, and two customizations scripting the same
// operation of the same kind (Karmada's webhook refuses the second too).
// A customization targets one apiVersion and kind, as in Karmada.
//
// With refusals it returns them all as the error, and an Interpreter in
// which each kind a refused customization targets fails every operation
// with its refusal, while other kinds work: a front end that reads a whole
// input (preview) stops at the error, a long-running one (continuous mode)
// keeps serving the kinds that are fine.
func New(customizations []api.ResourceInterpreterCustomization, opts ...Option) (*Interpreter, error) {
	o := options{timeout: DefaultCallTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	in := &Interpreter{scripts: map[schema.GroupVersionKind]map[string]*script{}, broken: map[schema.GroupVersionKind]error{}}
	sorted := make([]*api.ResourceInterpreterCustomization, len(customizations))
	for i := range customizations {
		sorted[i] = &customizations[i]
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var errs []error
	refuse := func(gvk schema.GroupVersionKind, err error) {
		errs = append(errs, err)
		if in.broken[gvk] == nil {
			in.broken[gvk] = err
		}
	}
	for _, ric := range sorted {
		name := fmt.Sprintf("%q", ric.Name)
		gvk := schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
		if fe := api.ValidateResourceInterpreterCustomization(ric); len(fe) > 0 {
			refuse(gvk, fmt.Errorf("resource interpreter customization %s: %w", name, fe.ToAggregate()))
			continue
		}
		for _, op := range operations() {
			rule := op.rule(&ric.Spec.Customizations)
			if rule == nil {
				continue
			}
			if prev := in.scripts[gvk][op.field]; prev != nil {
				refuse(gvk, fmt.Errorf("resource interpreter customization %s: spec.customizations.%s: %s %s already has one, from customization %s",
					name, op.field, gvk.GroupVersion(), gvk.Kind, prev.customization))
				continue
			}
			s, err := newScript(ric.Name, gvk, op, rule.LuaScript, o.timeout)
			if err == nil {
				s.now = o.now
				err = s.check()
			}
			if err != nil {
				refuse(gvk, err)
				continue
			}
			if in.scripts[gvk] == nil {
				in.scripts[gvk] = map[string]*script{}
			}
			in.scripts[gvk][op.field] = s
		}
	}
	if len(errs) > 0 {
		// One message, and every refusal still in the chain
		// (IsBudgetExceeded).
		return in, fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), anys(errs)...)
	}
	return in, nil
}

// check runs a compiled script's top level once in the sandbox and finds
// its function: a script that fails or runs out of budget while loading
// would fail every call.
func (s *script) check() error {
	L, err := newState(s.timeout, s.clock())
	if err != nil {
		return err
	}
	defer L.Close()
	if _, err := load(L, s.proto, s.op.fn); err != nil {
		return &scriptError{customization: s.customization, operation: s.op.field, err: cleanLuaError(L, err)}
	}
	return nil
}

// lookup returns the customized operation of a kind, nil when the built-in
// rule applies, and the refusal of a kind whose customization was refused.
func (in *Interpreter) lookup(gvk schema.GroupVersionKind, op operation) (*script, error) {
	if in == nil {
		return nil, nil
	}
	if err := in.broken[gvk]; err != nil {
		return nil, fmt.Errorf("%s: %w", op.field, err)
	}
	s := in.scripts[gvk][op.field]
	if in.guard == nil || len(in.scripts[gvk]) == 0 {
		return s, nil
	}
	// A refused kind fails every customizable operation, as a kind whose
	// customization was refused at load does.
	if err := in.guard.Refused(gvk); err != nil {
		return nil, fmt.Errorf("%s: %w", op.field, err)
	}
	if s == nil {
		return nil, nil
	}
	guarded := *s
	guarded.guard = in.guard
	return &guarded, nil
}

// Validate checks one customization on its own, as an admission webhook
// does: its fields, and that each script compiles, loads within budget
// and defines its function. Conflicts with other customizations are New's
// to find.
func Validate(ric *api.ResourceInterpreterCustomization) field.ErrorList {
	errs := api.ValidateResourceInterpreterCustomization(ric)
	for _, op := range operations() {
		rule := op.rule(&ric.Spec.Customizations)
		if rule == nil {
			continue
		}
		s, err := newScript(ric.Name, schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind), op, rule.LuaScript, DefaultCallTimeout)
		if err == nil {
			err = s.check()
		}
		if err != nil {
			var se *scriptError
			msg := err.Error()
			if errors.As(err, &se) {
				msg = se.err.Error()
			}
			errs = append(errs, field.Invalid(field.NewPath("spec", "customizations", op.field, "luaScript"), "(script)", msg))
		}
	}
	return errs
}

func anys(errs []error) []any {
	out := make([]any, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return out
}
