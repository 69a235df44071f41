package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateMultiClusterService returns what is wrong with m; nil when valid.
// Only CrossCluster is served: LoadBalancer is refused by name, since it
// needs a cloud load balancer controller flotilla does not run, and an
// accepted object that does nothing would mislead. Each cluster is named
// once, by a valid cluster name.
func ValidateMultiClusterService(m *MultiClusterService) field.ErrorList {
	var errs field.ErrorList
	if m.Namespace == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), "a MultiClusterService exposes the Service of its own namespace"))
	}
	spec := field.NewPath("spec")
	if len(m.Spec.Types) == 0 {
		errs = append(errs, field.Required(spec.Child("types"), "must list CrossCluster"))
	}
	seen := sets.New[ExposureType]()
	for i, t := range m.Spec.Types {
		p := spec.Child("types").Index(i)
		switch {
		case t == ExposureTypeLoadBalancer:
			errs = append(errs, field.Forbidden(p, "LoadBalancer is not served: it needs a cloud load balancer controller, which flotilla does not run; only CrossCluster is"))
		case t != ExposureTypeCrossCluster:
			errs = append(errs, field.NotSupported(p, t, []string{string(ExposureTypeCrossCluster)}))
		case seen.Has(t):
			errs = append(errs, field.Duplicate(p, t))
		}
		seen.Insert(t)
	}
	errs = append(errs, validateClusterSelectors(m.Spec.ProviderClusters, spec.Child("providerClusters"))...)
	errs = append(errs, validateClusterSelectors(m.Spec.ConsumerClusters, spec.Child("consumerClusters"))...)
	return errs
}

// validateClusterSelectors checks that each selector names a valid cluster
// name, once.
func validateClusterSelectors(sel []ClusterSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, s := range sel {
		p := fldPath.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, "cluster name must not be empty"))
		case len(validation.IsDNS1123Subdomain(s.Name)) > 0:
			errs = append(errs, field.Invalid(p, s.Name, fmt.Sprintf("not a cluster name: %v", validation.IsDNS1123Subdomain(s.Name))))
		case seen.Has(s.Name):
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		seen.Insert(s.Name)
	}
	return errs
}
