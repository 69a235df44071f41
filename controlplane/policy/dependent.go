package policy

import (
	"slices"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// MissingDependentOverrides returns, in the order the policy lists them,
// the names in the claiming policy's dependentOverrides that no override
// policy answers to. As in Karmada's detector (IsDependentOverridesPresent,
// IsDependentClusterOverridesPresent), a PropagationPolicy depends on
// OverridePolicies of its own namespace and a ClusterPropagationPolicy on
// ClusterOverridePolicies; a template is not propagated while any is missing.
// A policy being deleted still counts as present, as a Get finds it.
func MissingDependentOverrides(c Claim, ops []api.OverridePolicy, cops []api.ClusterOverridePolicy) []string {
	if c.Spec == nil {
		return nil
	}
	var missing []string
	for _, name := range c.Spec.DependentOverrides {
		var found bool
		if c.Kind == api.KindClusterPropagationPolicy {
			found = slices.ContainsFunc(cops, func(p api.ClusterOverridePolicy) bool { return p.Name == name })
		} else {
			found = slices.ContainsFunc(ops, func(p api.OverridePolicy) bool { return p.Namespace == c.Namespace && p.Name == name })
		}
		if !found && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	return missing
}
