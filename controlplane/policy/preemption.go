package policy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ClaimRef names the policy recorded as claiming a template: the claim a
// previous pass made.
type ClaimRef struct {
	// Kind is api.KindPropagationPolicy or api.KindClusterPropagationPolicy.
	Kind string
	// Name of the policy. A PropagationPolicy is in the template's namespace.
	Name string
}

// String is the form flotilla records on a binding: "<Kind>.<name>".
func (r ClaimRef) String() string { return r.Kind + "." + r.Name }

// ParseClaimRef reads the "<Kind>.<name>" form; ok is false for anything
// else. Kinds hold no dot, so the first dot separates.
func ParseClaimRef(s string) (ClaimRef, bool) {
	kind, name, ok := strings.Cut(s, ".")
	if !ok || name == "" || (kind != api.KindPropagationPolicy && kind != api.KindClusterPropagationPolicy) {
		return ClaimRef{}, false
	}
	return ClaimRef{Kind: kind, Name: name}, true
}

// Ref is the ClaimRef of a claim.
func (c Claim) Ref() ClaimRef { return ClaimRef{Kind: c.Kind, Name: c.Name} }

// ResolveClaim is the claim of tmpl given the claim a previous pass made
// (nil when none), as Karmada's resource detector decides it: a claim is
// sticky. The policy that claims a template keeps it while it exists, is
// not being deleted and still selects it, even when a policy of higher
// priority appears, unless that policy preempts it (pkg/detector/
// preemption.go):
//   - a PropagationPolicy with preemption Always preempts a
//     PropagationPolicy claim when its priority is strictly higher;
//   - a PropagationPolicy with preemption Always preempts a
//     ClusterPropagationPolicy claim whatever the priorities (Karmada's
//     preemptClusterPropagationPolicyDirectly);
//   - a ClusterPropagationPolicy with preemption Always preempts a
//     ClusterPropagationPolicy claim when its priority is strictly higher,
//     and never a PropagationPolicy claim.
//
// Among several preemptors the one ClaimPropagation would prefer wins: a
// PropagationPolicy, then the higher priority, specificity, lower name.
// A preemptor must select the template (validation makes every selector of
// an Always policy name its template, so it selects it by name). Without a
// valid previous claim this is ClaimPropagation. Karmada gates preemption
// behind its alpha PropagationPolicyPreemption feature; flotilla honours
// the field whenever it is set.
func ResolveClaim(tmpl *unstructured.Unstructured, prev *ClaimRef, pps []api.PropagationPolicy, cpps []api.ClusterPropagationPolicy) (Claim, bool) {
	held, ok := heldClaim(tmpl, prev, pps, cpps)
	if !ok {
		return ClaimPropagation(tmpl, pps, cpps)
	}
	heldPriority := priorityOf(held.Spec)
	ns := tmpl.GetNamespace()
	var best *candidate
	if ns != "" {
		for i := range pps {
			p := &pps[i]
			if p.Namespace != ns || p.DeletionTimestamp != nil || p.Spec.Preemption != api.PreemptAlways ||
				(held.Kind == api.KindPropagationPolicy && (p.Name == held.Name || priorityOf(&p.Spec) <= heldPriority)) {
				continue
			}
			best = pick(best, p.Name, &p.Spec, tmpl, i)
		}
		if best != nil {
			p := &pps[best.index]
			return Claim{Kind: api.KindPropagationPolicy, Namespace: p.Namespace, Name: p.Name, Specificity: best.specificity, Spec: &p.Spec}, true
		}
	}
	if held.Kind == api.KindPropagationPolicy {
		return held, true
	}
	for i := range cpps {
		p := &cpps[i]
		if p.DeletionTimestamp != nil || p.Spec.Preemption != api.PreemptAlways || p.Name == held.Name || priorityOf(&p.Spec) <= heldPriority {
			continue
		}
		best = pick(best, p.Name, &p.Spec, tmpl, i)
	}
	if best != nil {
		p := &cpps[best.index]
		return Claim{Kind: api.KindClusterPropagationPolicy, Name: p.Name, Specificity: best.specificity, Spec: &p.Spec}, true
	}
	return held, true
}

// heldClaim is the previous claim when its policy still exists, is not
// being deleted and selects tmpl. A PropagationPolicy never claims a
// cluster-scoped template or one of another namespace.
func heldClaim(tmpl *unstructured.Unstructured, prev *ClaimRef, pps []api.PropagationPolicy, cpps []api.ClusterPropagationPolicy) (Claim, bool) {
	if tmpl == nil || prev == nil {
		return Claim{}, false
	}
	switch prev.Kind {
	case api.KindPropagationPolicy:
		ns := tmpl.GetNamespace()
		for i := range pps {
			p := &pps[i]
			if ns == "" || p.Namespace != ns || p.Name != prev.Name || p.DeletionTimestamp != nil {
				continue
			}
			if sp := SelectorsSpecificity(p.Spec.ResourceSelectors, tmpl); sp != NoMatch {
				return Claim{Kind: api.KindPropagationPolicy, Namespace: p.Namespace, Name: p.Name, Specificity: sp, Spec: &p.Spec}, true
			}
		}
	case api.KindClusterPropagationPolicy:
		for i := range cpps {
			p := &cpps[i]
			if p.Name != prev.Name || p.DeletionTimestamp != nil {
				continue
			}
			if sp := SelectorsSpecificity(p.Spec.ResourceSelectors, tmpl); sp != NoMatch {
				return Claim{Kind: api.KindClusterPropagationPolicy, Name: p.Name, Specificity: sp, Spec: &p.Spec}, true
			}
		}
	}
	return Claim{}, false
}

// priorityOf is spec.priority, 0 when unset (Karmada's ExplicitPriority).
func priorityOf(spec *api.PropagationSpec) int32 {
	if spec.Priority == nil {
		return 0
	}
	return *spec.Priority
}

// Karmada's claim metadata on a ResourceBinding (and its template), which
// `kubectl get resourcebinding -o yaml` shows: the claiming
// PropagationPolicy's name and namespace, or the ClusterPropagationPolicy's
// name.
const (
	AnnotationClaimPolicyName        = "propagationpolicy.karmada.io/name"
	AnnotationClaimPolicyNamespace   = "propagationpolicy.karmada.io/namespace"
	AnnotationClaimClusterPolicyName = "clusterpropagationpolicy.karmada.io/name"
)

// BindingClaim is the claim a previous result records in Karmada's
// annotations; nil when it records none, or a PropagationPolicy of another
// namespace than the binding's template.
func BindingClaim(rb *api.ResourceBinding) *ClaimRef {
	if rb == nil {
		return nil
	}
	a := rb.Annotations
	if name := a[AnnotationClaimClusterPolicyName]; name != "" {
		return &ClaimRef{Kind: api.KindClusterPropagationPolicy, Name: name}
	}
	name, ns := a[AnnotationClaimPolicyName], a[AnnotationClaimPolicyNamespace]
	if name == "" || (ns != "" && ns != rb.Spec.Resource.Namespace) {
		return nil
	}
	return &ClaimRef{Kind: api.KindPropagationPolicy, Name: name}
}

// SetBindingClaim records claim in rb's annotations as Karmada does.
func SetBindingClaim(rb *api.ResourceBinding, claim ClaimRef, namespace string) {
	if rb.Annotations == nil {
		rb.Annotations = map[string]string{}
	}
	if claim.Kind == api.KindClusterPropagationPolicy {
		rb.Annotations[AnnotationClaimClusterPolicyName] = claim.Name
		return
	}
	rb.Annotations[AnnotationClaimPolicyName] = claim.Name
	rb.Annotations[AnnotationClaimPolicyNamespace] = namespace
}
