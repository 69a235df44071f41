package hoststore

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// InvalidPolicy is a policy of the host that fails the validation the
// admission webhook runs (policyv1's Validate methods): it was written
// while no webhook ran. It claims and overrides nothing; what it held
// stays as it was last rendered (Holds).
type InvalidPolicy struct {
	// Kind is the policy's kind (api.KindPropagationPolicy, …).
	Kind string
	// Namespace is "" for a cluster-wide policy.
	Namespace string
	// Name of the policy.
	Name string
	// Selectors are the policy's resource selectors, as written.
	Selectors []api.ResourceSelector
	// Errs name each invalid field.
	Errs field.ErrorList
}

// Ref is how the policy is named in messages: "Kind namespace/name".
func (p InvalidPolicy) Ref() string {
	if p.Namespace == "" {
		return p.Kind + " " + p.Name
	}
	return p.Kind + " " + p.Namespace + "/" + p.Name
}

// Message says the policy is refused and why, field by field.
func (p InvalidPolicy) Message() string {
	msgs := make([]string, len(p.Errs))
	for i, e := range p.Errs {
		msgs[i] = e.Error()
	}
	return fmt.Sprintf("%s is invalid and is not acted on: %s", p.Ref(), strings.Join(msgs, "; "))
}

// Holds reports whether an invalid override policy may apply to tmpl, so
// that rendering tmpl without it would drop overrides it applied while it
// was valid: it selects tmpl, or its resource selectors are themselves
// invalid (they cannot tell), or it has none (it selects everything).
func (p InvalidPolicy) Holds(tmpl *unstructured.Unstructured) bool {
	if len(p.Selectors) == 0 || policy.SelectorsSpecificity(p.Selectors, tmpl) != policy.NoMatch {
		return true
	}
	for _, e := range p.Errs {
		if strings.HasPrefix(e.Field, "spec.resourceSelectors") {
			return true
		}
	}
	return false
}

// Claimed returns the invalid propagation policy named by prev, the claim
// a template's binding records; nil when prev names no invalid policy.
// A template whose policy became invalid keeps its binding as it is: the
// last valid placement stays, as it would have had the webhook refused
// the edit, instead of being claimed by another policy or deleted from
// every member.
func Claimed(invalid []InvalidPolicy, namespace string, prev *policy.ClaimRef) *InvalidPolicy {
	if prev == nil {
		return nil
	}
	for i := range invalid {
		p := &invalid[i]
		if p.Kind == prev.Kind && p.Name == prev.Name && (p.Kind == api.KindClusterPropagationPolicy || p.Namespace == namespace) {
			return p
		}
	}
	return nil
}

// HeldBy returns the first invalid override policy that Holds tmpl, nil
// when none does.
func HeldBy(invalid []InvalidPolicy, tmpl *unstructured.Unstructured) *InvalidPolicy {
	for i := range invalid {
		if invalid[i].Holds(tmpl) {
			return &invalid[i]
		}
	}
	return nil
}

// validity remembers each policy's validation by UID and generation: every
// reconcile of every template reads its namespace's policies, and one
// validation costs about 50 µs, which over a cold start of 10,000 templates
// was seconds of CPU for answers that change only with a policy's spec
// (its generation). Bounded, so deleted policies' entries age out.
var validity = lru.New(4096)

type validityKey struct {
	uid        types.UID
	generation int64
}

// validate is p.Validate, remembered for p's UID and generation. A policy
// without a UID (not read from a server) is validated every time.
func validate(p interface {
	GetUID() types.UID
	GetGeneration() int64
	Validate() field.ErrorList
}) field.ErrorList {
	if p.GetUID() == "" {
		return p.Validate()
	}
	key := validityKey{p.GetUID(), p.GetGeneration()}
	if v, ok := validity.Get(key); ok {
		errs, _ := v.(field.ErrorList)
		return errs
	}
	errs := p.Validate()
	validity.Add(key, errs)
	return errs
}

// checkedPolicy is a policy object of the host that validates itself.
type checkedPolicy interface {
	GetUID() types.UID
	GetGeneration() int64
	GetNamespace() string
	GetName() string
	Validate() field.ErrorList
}

// valid returns the engine form of each valid policy of items, and adds
// each invalid one, as kind, to invalid.
func valid[T any, P interface {
	*T
	checkedPolicy
}, E any](items []T, kind string, invalid *[]InvalidPolicy, selectors func(P) []api.ResourceSelector, engine func(P) E) []E {
	out := make([]E, 0, len(items))
	for i := range items {
		p := P(&items[i])
		if errs := validate(p); len(errs) > 0 {
			*invalid = append(*invalid, InvalidPolicy{Kind: kind, Namespace: p.GetNamespace(), Name: p.GetName(), Selectors: selectors(p), Errs: errs})
			continue
		}
		out = append(out, engine(p))
	}
	return out
}

// PropagationPolicies lists the host's valid propagation policies that may
// claim a template in namespace, in the engine's form, and the invalid
// ones apart. A cluster-scoped template (namespace "") is claimed by
// ClusterPropagationPolicies only: no namespaced policy is listed for it,
// so no tenant's policy ever reaches it.
func PropagationPolicies(ctx context.Context, c client.Reader, namespace string) ([]api.PropagationPolicy, []api.ClusterPropagationPolicy, []InvalidPolicy, error) {
	var pps policyv1.PropagationPolicyList
	if namespace != "" {
		if err := c.List(ctx, &pps, client.InNamespace(namespace)); err != nil {
			return nil, nil, nil, fmt.Errorf("list propagation policies: %w", err)
		}
	}
	var cpps policyv1.ClusterPropagationPolicyList
	if err := c.List(ctx, &cpps); err != nil {
		return nil, nil, nil, fmt.Errorf("list cluster propagation policies: %w", err)
	}
	var invalid []InvalidPolicy
	pp := valid(pps.Items, api.KindPropagationPolicy, &invalid,
		func(p *policyv1.PropagationPolicy) []api.ResourceSelector { return p.Spec.ResourceSelectors },
		func(p *policyv1.PropagationPolicy) api.PropagationPolicy {
			return api.PropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		})
	cpp := valid(cpps.Items, api.KindClusterPropagationPolicy, &invalid,
		func(p *policyv1.ClusterPropagationPolicy) []api.ResourceSelector { return p.Spec.ResourceSelectors },
		func(p *policyv1.ClusterPropagationPolicy) api.ClusterPropagationPolicy {
			return api.ClusterPropagationPolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		})
	return pp, cpp, invalid, nil
}

// OverridePolicies lists the host's valid override policies that may apply
// to a template in namespace, in the engine's form, and the invalid ones
// apart; only ClusterOverridePolicies for a cluster-scoped template
// (namespace ""). A caller renders nothing an invalid one Holds.
func OverridePolicies(ctx context.Context, c client.Reader, namespace string) ([]api.OverridePolicy, []api.ClusterOverridePolicy, []InvalidPolicy, error) {
	var ops policyv1.OverridePolicyList
	if namespace != "" {
		if err := c.List(ctx, &ops, client.InNamespace(namespace)); err != nil {
			return nil, nil, nil, fmt.Errorf("list override policies: %w", err)
		}
	}
	var cops policyv1.ClusterOverridePolicyList
	if err := c.List(ctx, &cops); err != nil {
		return nil, nil, nil, fmt.Errorf("list cluster override policies: %w", err)
	}
	var invalid []InvalidPolicy
	op := valid(ops.Items, api.KindOverridePolicy, &invalid,
		func(p *policyv1.OverridePolicy) []api.ResourceSelector { return p.Spec.ResourceSelectors },
		func(p *policyv1.OverridePolicy) api.OverridePolicy {
			return api.OverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		})
	cop := valid(cops.Items, api.KindClusterOverridePolicy, &invalid,
		func(p *policyv1.ClusterOverridePolicy) []api.ResourceSelector { return p.Spec.ResourceSelectors },
		func(p *policyv1.ClusterOverridePolicy) api.ClusterOverridePolicy {
			return api.ClusterOverridePolicy{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		})
	return op, cop, invalid, nil
}
