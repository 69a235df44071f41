package policy

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Claim names the propagation policy that claims a template.
type Claim struct {
	// Kind is api.KindPropagationPolicy or api.KindClusterPropagationPolicy.
	Kind string
	// Namespace of the policy; empty for a ClusterPropagationPolicy.
	Namespace string
	// Name of the policy.
	Name string
	// Specificity is how precisely the policy's selectors matched.
	Specificity Specificity
	// Spec is the claiming policy's spec. It points into the slice passed to
	// ClaimPropagation; treat it as read-only.
	Spec *api.PropagationSpec
}

// candidate is a matching policy under consideration.
type candidate struct {
	name        string
	priority    int32
	specificity Specificity
	index       int
}

// better reports whether a beats b: higher explicit priority, then higher
// specificity, then the lower name.
func (a candidate) better(b candidate) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.specificity != b.specificity {
		return a.specificity > b.specificity
	}
	return a.name < b.name
}

// ClaimPropagation picks the propagation policy that claims tmpl, the way
// Karmada's resource detector does:
//  1. a PropagationPolicy in the template's namespace beats any
//     ClusterPropagationPolicy (cluster-scoped templates can only be claimed
//     by a ClusterPropagationPolicy);
//  2. then the higher spec.priority wins (nil is 0);
//  3. then the more specific selector wins (name > labelSelector > kind);
//  4. then the lower policy name wins.
//
// Policies being deleted are skipped. ok is false when no policy matches.
// Preemption of an existing claim is not decided here: this is the choice
// for an unclaimed template.
func ClaimPropagation(tmpl *unstructured.Unstructured, pps []api.PropagationPolicy, cpps []api.ClusterPropagationPolicy) (claim Claim, ok bool) {
	if tmpl == nil {
		return Claim{}, false
	}
	if ns := tmpl.GetNamespace(); ns != "" {
		var best *candidate
		for i := range pps {
			p := &pps[i]
			if p.Namespace != ns || p.DeletionTimestamp != nil {
				continue
			}
			best = pick(best, p.Name, &p.Spec, tmpl, i)
		}
		if best != nil {
			p := &pps[best.index]
			return Claim{Kind: api.KindPropagationPolicy, Namespace: p.Namespace, Name: p.Name, Specificity: best.specificity, Spec: &p.Spec}, true
		}
	}
	var best *candidate
	for i := range cpps {
		p := &cpps[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		best = pick(best, p.Name, &p.Spec, tmpl, i)
	}
	if best == nil {
		return Claim{}, false
	}
	p := &cpps[best.index]
	return Claim{Kind: api.KindClusterPropagationPolicy, Name: p.Name, Specificity: best.specificity, Spec: &p.Spec}, true
}

// pick returns the better of best and the policy at index, which is only a
// candidate if its selectors match tmpl.
func pick(best *candidate, name string, spec *api.PropagationSpec, tmpl *unstructured.Unstructured, index int) *candidate {
	sp := SelectorsSpecificity(spec.ResourceSelectors, tmpl)
	if sp == NoMatch {
		return best
	}
	c := candidate{name: name, specificity: sp, index: index}
	if spec.Priority != nil {
		c.priority = *spec.Priority
	}
	if best == nil || c.better(*best) {
		return &c
	}
	return best
}
