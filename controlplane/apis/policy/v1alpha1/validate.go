package v1alpha1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// The Validate methods are the one check of a stored policy, shared by the
// admission webhook (which refuses the write) and the controllers (which
// refuse to act on a policy written while no webhook ran): Karmada's
// defaults are applied to a copy first, as Karmada's mutating webhook
// would have applied them, then controlplane/api's validation runs, the
// same as `preview` and the Terraform provider run.

// Validate returns what is wrong with the policy; nil when it is valid.
func (p *PropagationPolicy) Validate() field.ErrorList {
	e := api.PropagationPolicy{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	api.DefaultPropagationPolicy(&e)
	return api.ValidatePropagationPolicy(&e)
}

// Validate returns what is wrong with the policy; nil when it is valid.
func (p *ClusterPropagationPolicy) Validate() field.ErrorList {
	e := api.ClusterPropagationPolicy{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	api.DefaultClusterPropagationPolicy(&e)
	return api.ValidateClusterPropagationPolicy(&e)
}

// Validate returns what is wrong with the policy; nil when it is valid.
func (p *OverridePolicy) Validate() field.ErrorList {
	e := api.OverridePolicy{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	api.DefaultOverridePolicy(&e)
	return api.ValidateOverridePolicy(&e)
}

// Validate returns what is wrong with the policy; nil when it is valid.
func (p *ClusterOverridePolicy) Validate() field.ErrorList {
	e := api.ClusterOverridePolicy{ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	api.DefaultClusterOverridePolicy(&e)
	return api.ValidateClusterOverridePolicy(&e)
}
