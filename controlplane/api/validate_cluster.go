package api

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxClusterNameLength leaves room for Karmada's "karmada-es-" prefix in
// the 63-character namespace name, as Karmada's ValidateClusterName does.
const maxClusterNameLength = 48

// ValidateClusterName checks a member cluster name: a DNS-1123 label of at
// most 48 characters. It returns the problems, none if valid.
func ValidateClusterName(name string) []string {
	if len(name) > maxClusterNameLength {
		return []string{fmt.Sprintf("must be no more than %d characters", maxClusterNameLength)}
	}
	return validation.IsDNS1123Label(name)
}

// ValidateCluster validates a member cluster.
func ValidateCluster(c *Cluster) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&c.ObjectMeta, false,
		func(name string, _ bool) []string { return ValidateClusterName(name) }, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	errs = append(errs, enum(spec.Child("syncMode"), c.Spec.SyncMode, Push, Pull)...)
	errs = append(errs, validateTaints(c.Spec.Taints, spec.Child("taints"))...)
	errs = append(errs, validateResourceModels(c.Spec.ResourceModels, spec.Child("resourceModels"))...)
	if ns := c.Status.NodeSummary; ns != nil && ns.ReadyNum > ns.TotalNum {
		errs = append(errs, field.Invalid(field.NewPath("status", "nodeSummary", "readyNum"), ns.ReadyNum, "must not exceed totalNum"))
	}
	return errs
}

// validateTaints checks key, value and effect, and that no key and effect
// pair repeats.
func validateTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range taints {
		p := fldPath.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		errs = append(errs, requiredEnum(p.Child("effect"), t.Effect,
			corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
		id := t.Key + "\x00" + string(t.Effect)
		if seen.Has(id) {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s:%s", t.Key, t.Effect)))
		}
		seen.Insert(id)
	}
	return errs
}

// validateResourceModels checks grades ascend without repeats and every
// range has a name and min < max. Karmada additionally requires the grades
// to tile each resource without gaps; that is left to the estimator, which
// copes with gaps.
func validateResourceModels(models []ResourceModel, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, m := range models {
		p := fldPath.Index(i)
		if i > 0 && m.Grade <= models[i-1].Grade {
			errs = append(errs, field.Invalid(p.Child("grade"), m.Grade, "grades must be in ascending order without repeats"))
		}
		if len(m.Ranges) == 0 {
			errs = append(errs, field.Required(p.Child("ranges"), ""))
		}
		for j, r := range m.Ranges {
			rp := p.Child("ranges").Index(j)
			if r.Name == "" {
				errs = append(errs, field.Required(rp.Child("name"), ""))
			}
			if r.Min.Cmp(r.Max) >= 0 {
				errs = append(errs, field.Invalid(rp.Child("min"), r.Min.String(), "must be less than max"))
			}
		}
	}
	return errs
}

// ValidateResourceBinding validates a binding read as a previous result.
func ValidateResourceBinding(b *ResourceBinding) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&b.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	res := spec.Child("resource")
	if b.Spec.Resource.APIVersion == "" {
		errs = append(errs, field.Required(res.Child("apiVersion"), ""))
	}
	if b.Spec.Resource.Kind == "" {
		errs = append(errs, field.Required(res.Child("kind"), ""))
	}
	if b.Spec.Resource.Name == "" {
		errs = append(errs, field.Required(res.Child("name"), ""))
	}
	if b.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), b.Spec.Replicas, "must be greater than or equal to 0"))
	}
	seen := sets.New[string]()
	for i, tc := range b.Spec.Clusters {
		p := spec.Child("clusters").Index(i)
		if tc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if seen.Has(tc.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), tc.Name))
		}
		seen.Insert(tc.Name)
		if tc.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), tc.Replicas, "must be greater than or equal to 0"))
		}
	}
	if b.Spec.Placement != nil {
		errs = append(errs, ValidatePlacement(b.Spec.Placement, spec.Child("placement"))...)
	}
	return errs
}
