package hoststore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// DefaultLoadWait is how long a caller waits for one kind's
// customizations to load (every script's top level run in the sandbox)
// before that kind is refused for now: far above one script's budget, so
// only a script the sandbox cannot stop reaches it.
const DefaultLoadWait = 10 * time.Second

// Interpreters caches the fleet's resource interpreter for the
// continuous driver: each kind's customizations are loaded once per set
// of their UIDs and generations, and reused by every reconcile of every
// controller until one of them changes. The generation, not the
// resourceVersion, is the key: it moves only with the spec (the scripts
// and their target), while the status this package's callers write on a
// customization moves the resourceVersion, and a rebuild per status write
// would run every script's top level again for nothing. The UID tells a
// customization deleted and created again under the same name.
//
// Each kind loads on its own (interpret.Merge joins them), so a
// customization whose top level is slow delays only its kind, and a
// changed customization runs only its kind's top levels again.
//
// Interpreters is also the Interpreters' guard: a call of a kind's script
// that exceeds a budget refuses that kind, with the recorded error, until
// one of its customizations changes, so a hostile script costs one budget
// rather than one per reconcile. It is safe for concurrent use; a nil
// *Interpreters loads afresh on every call, as LoadInterpreter does.
type Interpreters struct {
	// LoadWait bounds the wait for one kind's customizations to load;
	// zero is DefaultLoadWait.
	LoadWait time.Duration
	// Notify, when set, is called with the name of a customization whose
	// report (Report) may have changed: its kind loaded, or a call of its
	// script exceeded a budget. It must not block.
	Notify func(name string)
	// Now is the clock scripts read through os.time and os.date; nil is
	// the real one (time.Now): a live status carries real timestamps, as
	// in Karmada.
	Now func() time.Time

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kindLoad
	// exceeded is, per kind, the first call that ran out of a budget
	// since the kind's customizations last changed.
	exceeded map[schema.GroupVersionKind]*exceededCall
	// merged is the last whole Interpreter and the loads it joined: it is
	// returned while the same loads are current.
	merged      *interpret.Interpreter
	mergedLoads []*kindLoad
}

// kindLoad is one kind's customizations, loaded in the background.
type kindLoad struct {
	gvk schema.GroupVersionKind
	key string
	// members are the customizations by name, with their UID and
	// generation.
	members map[string]version
	done    chan struct{}
	// in is set when done is closed.
	in *interpret.Interpreter
}

// version is one customization's identity and spec generation.
type version struct {
	uid        types.UID
	generation int64
}

// exceededCall is a call that ran out of a budget, with the error its
// kind is refused with from then on.
type exceededCall struct {
	interpret.BudgetExceeded
	version version
	refusal error
}

// NewInterpreters returns an empty cache.
func NewInterpreters() *Interpreters {
	return &Interpreters{}
}

// Load returns the fleet's interpreter for the customizations c lists now
// (nil without any), loading the kinds whose customizations changed. A
// kind that does not load within LoadWait fails its customizable
// operations for this call and is waited for again on the next. The
// wait ends with ctx.
func (is *Interpreters) Load(ctx context.Context, c client.Reader) (*interpret.Interpreter, error) {
	if is == nil {
		return LoadInterpreter(ctx, c)
	}
	var list configv1.ResourceInterpreterCustomizationList
	if err := c.List(ctx, &list); err != nil {
		if apimeta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list resource interpreter customizations: %w", err)
	}
	loads := is.current(list.Items)
	if len(loads) == 0 {
		return nil, nil
	}
	is.mu.Lock()
	if is.merged != nil && slices.Equal(is.mergedLoads, loads) {
		in := is.merged
		is.mu.Unlock()
		return in, nil
	}
	is.mu.Unlock()
	wait := is.LoadWait
	if wait <= 0 {
		wait = DefaultLoadWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	parts := make([]*interpret.Interpreter, len(loads))
	complete, expired := true, false
	for i, l := range loads {
		if !expired {
			select {
			case <-l.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("load resource interpreter customizations: %w", ctx.Err())
			case <-timer.C:
				expired = true
			}
		}
		select {
		case <-l.done:
			parts[i] = l.in
		default:
			// Not loaded within LoadWait: this kind waits for the next
			// call; the others go on.
			complete = false
			parts[i] = interpret.Refused(l.gvk, fmt.Errorf("resource interpreter customizations %s of %s %s did not load within %s",
				strings.Join(l.names(), ", "), l.gvk.GroupVersion(), l.gvk.Kind, wait))
		}
	}
	g := guard{is: is, loads: make(map[schema.GroupVersionKind]*kindLoad, len(loads))}
	for _, l := range loads {
		g.loads[l.gvk] = l
	}
	in := interpret.Merge(parts...).WithGuard(g)
	if complete {
		is.mu.Lock()
		is.merged, is.mergedLoads = in, loads
		is.mu.Unlock()
	}
	return in, nil
}

// current returns the load of each kind items customize, in kind order,
// starting the loads of the kinds whose customizations changed and
// forgetting the kinds no longer customized and the exceeded budgets of
// customizations that changed.
func (is *Interpreters) current(items []configv1.ResourceInterpreterCustomization) []*kindLoad {
	byKind := map[schema.GroupVersionKind][]*configv1.ResourceInterpreterCustomization{}
	for i := range items {
		r := &items[i]
		gvk := schema.FromAPIVersionAndKind(r.Spec.Target.APIVersion, r.Spec.Target.Kind)
		byKind[gvk] = append(byKind[gvk], r)
	}
	kinds := make([]schema.GroupVersionKind, 0, len(byKind))
	for gvk := range byKind {
		kinds = append(kinds, gvk)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })

	is.mu.Lock()
	defer is.mu.Unlock()
	if is.kinds == nil {
		is.kinds = map[schema.GroupVersionKind]*kindLoad{}
		is.exceeded = map[schema.GroupVersionKind]*exceededCall{}
	}
	for gvk := range is.kinds {
		if byKind[gvk] == nil {
			delete(is.kinds, gvk)
			delete(is.exceeded, gvk)
		}
	}
	out := make([]*kindLoad, len(kinds))
	for i, gvk := range kinds {
		rics := byKind[gvk]
		members := make(map[string]version, len(rics))
		keys := make([]string, len(rics))
		for j, r := range rics {
			members[r.Name] = version{uid: r.UID, generation: r.Generation}
			keys[j] = fmt.Sprintf("%s/%s/%d", r.Name, r.UID, r.Generation)
		}
		sort.Strings(keys)
		key := strings.Join(keys, ",")
		l := is.kinds[gvk]
		if l == nil || l.key != key {
			l = &kindLoad{gvk: gvk, key: key, members: members, done: make(chan struct{})}
			is.kinds[gvk] = l
			if x := is.exceeded[gvk]; x != nil && members[x.Customization] != x.version {
				delete(is.exceeded, gvk)
			}
			engine := make([]api.ResourceInterpreterCustomization, len(rics))
			for j, r := range rics {
				engine[j] = r.Engine()
			}
			go is.load(l, engine)
		}
		out[i] = l
	}
	return out
}

// load runs one kind's scripts' top levels. It runs apart from any
// reconcile, so a caller that stops waiting (its context ended, LoadWait
// passed) leaves it to finish for the next caller.
func (is *Interpreters) load(l *kindLoad, rics []api.ResourceInterpreterCustomization) {
	// A refusal lives on in the Interpreter: the kind fails with it.
	now := is.Now
	if now == nil {
		now = time.Now
	}
	l.in, _ = interpret.New(rics, interpret.WithClock(now))
	close(l.done)
	is.notify(l.names()...)
}

func (is *Interpreters) notify(names ...string) {
	if is.Notify == nil {
		return
	}
	for _, n := range names {
		is.Notify(n)
	}
}

// names are the load's customizations, sorted.
func (l *kindLoad) names() []string {
	out := make([]string, 0, len(l.members))
	for n := range l.members {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// guard is the Guard of the Interpreters' Interpreters; loads are the
// loads the guarded Interpreter was made of, so a call of a script that
// has since changed refuses nothing.
type guard struct {
	is    *Interpreters
	loads map[schema.GroupVersionKind]*kindLoad
}

// Refused returns the refusal recorded for kind, if any.
func (g guard) Refused(kind schema.GroupVersionKind) error {
	g.is.mu.Lock()
	defer g.is.mu.Unlock()
	if x := g.is.exceeded[kind]; x != nil {
		return x.refusal
	}
	return nil
}

// Exceeded records the first call of a kind's script that ran out of a
// budget since the kind's customizations changed.
func (g guard) Exceeded(b interpret.BudgetExceeded) {
	g.is.mu.Lock()
	v, ok := version{}, false
	if l, cur := g.loads[b.Kind], g.is.kinds[b.Kind]; l != nil && cur != nil {
		v, ok = l.members[b.Customization]
		ok = ok && cur.members[b.Customization] == v
	}
	if !ok || g.is.exceeded[b.Kind] != nil {
		// A call of a customization already replaced: its successor
		// gets its own chance.
		g.is.mu.Unlock()
		return
	}
	g.is.exceeded[b.Kind] = &exceededCall{
		BudgetExceeded: b,
		version:        v,
		refusal: fmt.Errorf("%w; %s %s is refused until resource interpreter customization %q changes",
			b.Err, b.Kind.GroupVersion(), b.Kind.Kind, b.Customization),
	}
	g.is.mu.Unlock()
	g.is.notify(b.Customization)
}

// CustomizationReport is what the cache knows of one customization at
// its current generation.
type CustomizationReport struct {
	// Loaded is whether its kind's customizations have loaded.
	Loaded bool
	// Refusal is why its kind was refused when loading, naming it (nil
	// when it was not, or when another customization of the kind was
	// refused).
	Refusal error
	// Exceeded is the call of its script that ran out of a budget, which
	// refuses its kind until it changes; nil when none did.
	Exceeded *interpret.BudgetExceeded
}

// Report returns what the cache knows of ric; the zero report when ric is
// not the generation the cache holds.
func (is *Interpreters) Report(ric *configv1.ResourceInterpreterCustomization) CustomizationReport {
	if is == nil {
		return CustomizationReport{}
	}
	gvk := schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
	v := version{uid: ric.UID, generation: ric.Generation}
	is.mu.Lock()
	defer is.mu.Unlock()
	l := is.kinds[gvk]
	if l == nil || l.members[ric.Name] != v {
		return CustomizationReport{}
	}
	var r CustomizationReport
	select {
	case <-l.done:
		r.Loaded = true
		if err := l.in.Refusal(gvk); err != nil && strings.Contains(err.Error(), fmt.Sprintf("%q", ric.Name)) {
			r.Refusal = err
		}
	default:
	}
	if x := is.exceeded[gvk]; x != nil && x.Customization == ric.Name && x.version == v {
		b := x.BudgetExceeded
		r.Exceeded = &b
	}
	return r
}
