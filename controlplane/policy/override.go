package policy

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// AppliedOverride is one override policy that applies to a template, with
// its rules. Which rules apply to which cluster is decided per cluster with
// ClusterMatches on each rule's TargetCluster.
type AppliedOverride struct {
	// Kind is api.KindOverridePolicy or api.KindClusterOverridePolicy.
	Kind string
	// Namespace of the policy; empty for a ClusterOverridePolicy.
	Namespace string
	// Name of the policy.
	Name string
	// Specificity is how precisely the policy's selectors matched. A policy
	// without selectors applies to every template and has MatchKind, like a
	// selector naming only the kind: Karmada ranks both PriorityMatchAll.
	Specificity Specificity
	// Rules to apply in order. A policy that still uses the deprecated
	// top-level targetCluster/overriders yields one rule made of them. The
	// slice shares memory with the input policy; treat it as read-only.
	Rules []api.RuleWithCluster
}

// MatchOverrides returns the override policies that apply to tmpl in the
// order their rules must be applied, as Karmada's override manager does:
// cluster-wide policies first, then the namespaced ones in the template's
// namespace; within each set by specificity ascending (so the most specific
// policy applies last and wins), then by name ascending. A policy with no
// resource selectors applies to every template and ties with one selecting by
// kind only, as in Karmada's getOverridersFromOverridePolicies. Policies
// being deleted are skipped.
func MatchOverrides(tmpl *unstructured.Unstructured, ops []api.OverridePolicy, cops []api.ClusterOverridePolicy) []AppliedOverride {
	if tmpl == nil {
		return nil
	}
	var cluster, namespaced []AppliedOverride
	for i := range cops {
		p := &cops[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if a, ok := applied(api.KindClusterOverridePolicy, "", p.Name, &p.Spec, tmpl); ok {
			cluster = append(cluster, a)
		}
	}
	if ns := tmpl.GetNamespace(); ns != "" {
		for i := range ops {
			p := &ops[i]
			if p.Namespace != ns || p.DeletionTimestamp != nil {
				continue
			}
			if a, ok := applied(api.KindOverridePolicy, p.Namespace, p.Name, &p.Spec, tmpl); ok {
				namespaced = append(namespaced, a)
			}
		}
	}
	sortOverrides(cluster)
	sortOverrides(namespaced)
	return append(cluster, namespaced...)
}

// applied builds the AppliedOverride of one policy; ok is false if its
// selectors do not select tmpl.
func applied(kind, namespace, name string, spec *api.OverrideSpec, tmpl *unstructured.Unstructured) (AppliedOverride, bool) {
	if len(spec.ResourceSelectors) == 0 {
		// Karmada gives a selector-less policy PriorityMatchAll, the rank of
		// a kind-only selector, so the two are ordered by name alone.
		return AppliedOverride{Kind: kind, Namespace: namespace, Name: name, Specificity: MatchKind, Rules: rulesOf(spec)}, true
	}
	sp := SelectorsSpecificity(spec.ResourceSelectors, tmpl)
	if sp == NoMatch {
		return AppliedOverride{}, false
	}
	return AppliedOverride{Kind: kind, Namespace: namespace, Name: name, Specificity: sp, Rules: rulesOf(spec)}, true
}

// rulesOf returns the policy's rules, or one rule made of the deprecated
// top-level targetCluster/overriders when it has none.
func rulesOf(spec *api.OverrideSpec) []api.RuleWithCluster {
	if len(spec.OverrideRules) > 0 {
		return spec.OverrideRules
	}
	return []api.RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}
}

// sortOverrides orders by specificity ascending, then name ascending.
func sortOverrides(list []AppliedOverride) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Specificity != list[j].Specificity {
			return list[i].Specificity < list[j].Specificity
		}
		return list[i].Name < list[j].Name
	})
}
