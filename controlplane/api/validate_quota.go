package api

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateFederatedResourceQuota checks a FederatedResourceQuota as
// Karmada's webhook does: a namespaced object with a DNS-1123 label name
// (it names the members' ResourceQuotas), resource names that are
// qualified names, no negative quantity, cluster names that are valid and
// listed once, assignments that name only resources of overall and add up
// to no more than overall.
func ValidateFederatedResourceQuota(q *FederatedResourceQuota) field.ErrorList {
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if q.Namespace == "" {
		errs = append(errs, field.Required(md.Child("namespace"), "a FederatedResourceQuota limits one namespace"))
	}
	for _, msg := range validation.IsDNS1123Label(q.Name) {
		errs = append(errs, field.Invalid(md.Child("name"), q.Name, msg))
	}
	spec := field.NewPath("spec")
	if len(q.Spec.Overall) == 0 {
		errs = append(errs, field.Required(spec.Child("overall"), "at least one limit"))
	}
	errs = append(errs, validateResourceList(q.Spec.Overall, spec.Child("overall"))...)
	seen := map[string]bool{}
	sa := spec.Child("staticAssignments")
	for i, a := range q.Spec.StaticAssignments {
		p := sa.Index(i)
		for _, msg := range ValidateClusterName(a.ClusterName) {
			errs = append(errs, field.Invalid(p.Child("clusterName"), a.ClusterName, msg))
		}
		if seen[a.ClusterName] {
			errs = append(errs, field.Duplicate(p.Child("clusterName"), a.ClusterName))
		}
		seen[a.ClusterName] = true
		errs = append(errs, validateResourceList(a.Hard, p.Child("hard"))...)
		for _, name := range sortedResourceNames(a.Hard) {
			if _, ok := q.Spec.Overall[name]; !ok {
				errs = append(errs, field.Invalid(p.Child("hard").Key(string(name)), string(name), "is not limited by spec.overall"))
			}
		}
	}
	sum := SumAssignments(q.Spec.StaticAssignments)
	for _, name := range sortedResourceNames(q.Spec.Overall) {
		limit := q.Spec.Overall[name]
		if assigned, ok := sum[name]; ok && assigned.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(spec.Child("overall").Key(string(name)), limit.String(),
				fmt.Sprintf("is less than the %s the static assignments add up to", assigned.String())))
		}
	}
	return errs
}

// validateResourceList checks the names and quantities of a quota's limits.
func validateResourceList(list corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedResourceNames(list) {
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p.Key(string(name)), string(name), msg))
		}
		if q := list[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// sortedResourceNames gives a map's names in order, so errors are stable.
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		out = append(out, name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
