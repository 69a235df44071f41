package engine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Previous is what a front end recorded of a template's last scheduling
// result. Planning resumes from it, as Karmada's scheduler resumes from a
// ResourceBinding: placements stay sticky (a template that fell back to a
// later clusterAffinities term stays there), scaling steady, and the claim
// sticky (a policy with a higher priority takes the template only with
// preemption Always).
type Previous struct {
	// Placement is the recorded cluster → replicas.
	Placement []api.TargetCluster
	// AffinityTerm is the clusterAffinities term the template was placed
	// by (Karmada's status.schedulerObservedAffinityName).
	AffinityTerm string
	// Claim is the policy that claimed the template; nil when none did.
	Claim *policy.ClaimRef
}

// binding is p as the previous ResourceBinding of tmpl; ok is false when
// there is nothing to resume from.
func (p Previous) binding(tmpl *unstructured.Unstructured) (rb api.ResourceBinding, ok bool) {
	if tmpl == nil || (len(p.Placement) == 0 && p.Claim == nil) {
		return rb, false
	}
	rb.Spec.Resource = api.TemplateRefOf(tmpl).Resource()
	rb.Spec.Clusters = p.Placement
	rb.Status.SchedulerObservedAffinityName = p.AffinityTerm
	if p.Claim != nil {
		policy.SetBindingClaim(&rb, *p.Claim, tmpl.GetNamespace())
	}
	return rb, true
}

// bindings are the previous ResourceBindings of templates; previous[i]
// belongs to templates[i], and a template past its end has none.
func bindings(templates []*unstructured.Unstructured, previous []Previous) []api.ResourceBinding {
	var out []api.ResourceBinding
	for i, p := range previous {
		if i >= len(templates) {
			break
		}
		if rb, ok := p.binding(templates[i]); ok {
			out = append(out, rb)
		}
	}
	return out
}
