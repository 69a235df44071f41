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
	opRetain    = operation{"retention", "Retain", func(r *api.CustomizationRules) *api.LuaScript { return r.Retention }}
	opReplicas  = operation{"replicaResource", "GetReplicas", func(r *api.CustomizationRules) *api.LuaScript { return r.ReplicaResource }}
	opRevise    = operation{"replicaRevision", "ReviseReplica", func(r *api.CustomizationRules) *api.LuaScript { return r.ReplicaRevision }}
	opReflect   = operation{"statusReflection", "ReflectStatus", func(r *api.CustomizationRules) *api.LuaScript { return r.StatusReflection }}
	opAggregate = operation{"statusAggregation", "AggregateStatus", func(r *api.CustomizationRules) *api.LuaScript { return r.StatusAggregation }}
	opHealth    = operation{"healthInterpretation", "InterpretHealth", func(r *api.CustomizationRules) *api.LuaScript { return r.HealthInterpretation }}
	opDeps      = operation{"dependencyInterpretation", "GetDependencies", func(r *api.CustomizationRules) *api.LuaScript { return r.DependencyInterpretation }}
)

func operations() []operation {
	return []operation{opRetain, opReplicas, opRevise, opReflect, opAggregate, opHealth, opDeps}
}

// script is one customized operation of one kind, compiled once.
type script struct {
	// customization is the name of the ResourceInterpreterCustomization.
	customization string
	op            operation
	proto         *lua.FunctionProto
	// timeout is the wall-clock deadline of one call.
	timeout time.Duration
}

// call runs the script's function with args, in a fresh state.
func (s *script) call(nRet int, args ...any) ([]any, error) {
	return run(s, s.timeout, nRet, args...)
}

// newScript compiles one operation's script.
func newScript(customization string, op operation, source string, timeout time.Duration) (*script, error) {
	proto, err := compile(op.field, source)
	if err != nil {
		return nil, &scriptError{customization: customization, operation: op.field, err: err}
	}
	return &script{customization: customization, op: op, proto: proto, timeout: timeout}, nil
}

// Option changes how New's Interpreter runs customizations.
type Option func(*options)

type options struct {
	timeout time.Duration
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
			s, err := newScript(name, op, rule.LuaScript, o.timeout)
			if err == nil {
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
	L, err := newState(s.timeout)
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
	return in.scripts[gvk][op.field], nil
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
		s, err := newScript(fmt.Sprintf("%q", ric.Name), op, rule.LuaScript, DefaultCallTimeout)
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
