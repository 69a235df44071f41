package api

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Bundle is everything decoded from a set of Karmada YAML documents:
// Karmada objects by kind, and every other object as a resource template.
// Objects keep their document order.
// +kubebuilder:object:generate=false
type Bundle struct {
	// Clusters are the member clusters.
	Clusters []Cluster
	// PropagationPolicies are the namespaced propagation policies.
	PropagationPolicies []PropagationPolicy
	// ClusterPropagationPolicies are the cluster-wide propagation policies.
	ClusterPropagationPolicies []ClusterPropagationPolicy
	// OverridePolicies are the namespaced override policies.
	OverridePolicies []OverridePolicy
	// ClusterOverridePolicies are the cluster-wide override policies.
	ClusterOverridePolicies []ClusterOverridePolicy
	// Quotas are the FederatedResourceQuotas the plan respects.
	Quotas []FederatedResourceQuota
	// Bindings are previous scheduling results.
	Bindings []ResourceBinding
	// Interpreters are the resource interpreter customizations.
	Interpreters []ResourceInterpreterCustomization
	// Templates are the resource templates to propagate.
	Templates []*unstructured.Unstructured
	// Origins maps ObjectKey of every object above to where it was decoded
	// from ("file:document"), for diagnostics.
	Origins map[string]string
}

// ObjectKey identifies an object in a Bundle: "apiVersion Kind
// namespace/name", or "apiVersion Kind name" when it has no namespace. The
// API version is part of the key because two templates may share kind and
// name in different groups.
func ObjectKey(apiVersion, kind, namespace, name string) string {
	if namespace == "" {
		return fmt.Sprintf("%s %s %s", apiVersion, kind, name)
	}
	return fmt.Sprintf("%s %s %s/%s", apiVersion, kind, namespace, name)
}

// Merge appends other's objects to b, in order. It fails, changing nothing,
// if an object is defined in both bundles, naming both origins.
func (b *Bundle) Merge(other *Bundle) error {
	if other == nil {
		return nil
	}
	var errs []error
	for _, key := range sortedKeys(other.Origins) {
		if at, dup := b.Origins[key]; dup {
			errs = append(errs, fmt.Errorf("%s: %s is already defined at %s", other.Origins[key], key, at))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	b.Clusters = append(b.Clusters, other.Clusters...)
	b.PropagationPolicies = append(b.PropagationPolicies, other.PropagationPolicies...)
	b.ClusterPropagationPolicies = append(b.ClusterPropagationPolicies, other.ClusterPropagationPolicies...)
	b.OverridePolicies = append(b.OverridePolicies, other.OverridePolicies...)
	b.ClusterOverridePolicies = append(b.ClusterOverridePolicies, other.ClusterOverridePolicies...)
	b.Quotas = append(b.Quotas, other.Quotas...)
	b.Bindings = append(b.Bindings, other.Bindings...)
	b.Interpreters = append(b.Interpreters, other.Interpreters...)
	b.Templates = append(b.Templates, other.Templates...)
	if len(other.Origins) > 0 && b.Origins == nil {
		b.Origins = make(map[string]string, len(other.Origins))
	}
	for k, v := range other.Origins {
		b.Origins[k] = v
	}
	return nil
}
