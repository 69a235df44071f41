package api

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation follows Karmada's webhooks (pkg/util/validation) and the enums
// and bounds of its CRD schemas. Paths are rooted at the object ("spec...",
// "metadata..."), so a caller can name the exact field. Validation assumes
// defaults were applied but accepts the empty value of every defaulted
// enum, so it can also run on undefaulted input.

// ValidatePropagationPolicy validates a namespaced propagation policy.
func ValidatePropagationPolicy(p *PropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidatePropagationSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateClusterPropagationPolicy validates a cluster-wide propagation policy.
func ValidateClusterPropagationPolicy(p *ClusterPropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidatePropagationSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateOverridePolicy validates a namespaced override policy.
func ValidateOverridePolicy(p *OverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidateOverrideSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateClusterOverridePolicy validates a cluster-wide override policy.
func ValidateClusterOverridePolicy(p *ClusterOverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&p.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidateOverrideSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidatePropagationSpec validates a propagation spec rooted at fldPath.
func ValidatePropagationSpec(spec *PropagationSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	selPath := fldPath.Child("resourceSelectors")
	if len(spec.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(selPath, "at least one resource selector is required"))
	}
	errs = append(errs, validateResourceSelectors(spec.ResourceSelectors, selPath)...)
	if spec.Association {
		errs = append(errs, field.Forbidden(fldPath.Child("association"), AssociationRefusal))
	}
	if spec.Preemption == PreemptAlways {
		for i, rs := range spec.ResourceSelectors {
			if rs.Name == "" {
				errs = append(errs, field.Invalid(selPath.Index(i).Child("name"), rs.Name,
					"name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption"))
			}
		}
	}
	errs = append(errs, ValidatePlacement(&spec.Placement, fldPath.Child("placement"))...)
	errs = append(errs, enum(fldPath.Child("preemption"), spec.Preemption, PreemptAlways, PreemptNever)...)
	errs = append(errs, enum(fldPath.Child("conflictResolution"), spec.ConflictResolution, ConflictAbort, ConflictOverwrite)...)
	errs = append(errs, enum(fldPath.Child("activationPreference"), spec.ActivationPreference, LazyActivation)...)
	if spec.Failover != nil && spec.Failover.Application != nil && !spec.PropagateDeps {
		errs = append(errs, field.Invalid(fldPath.Child("propagateDeps"), spec.PropagateDeps,
			"application failover is set, propagateDeps must be true"))
	}
	errs = append(errs, validateFailover(spec.Failover, fldPath.Child("failover"))...)
	errs = append(errs, validateSuspension(spec.Suspension, fldPath.Child("suspension"))...)
	errs = append(errs, ValidateRollout(spec.Rollout, fldPath.Child("rollout"))...)
	if sp := spec.SchedulePriority; sp != nil {
		p := fldPath.Child("schedulePriority")
		if sp.PriorityClassSource == "" {
			errs = append(errs, field.Required(p.Child("priorityClassSource"), ""))
		}
		errs = append(errs, enum(p.Child("priorityClassSource"), sp.PriorityClassSource, KubePriorityClass)...)
		if sp.PriorityClassName == "" {
			errs = append(errs, field.Required(p.Child("priorityClassName"), ""))
		}
	}
	return errs
}

// AssociationRefusal says why association: true is refused in every front
// end. Karmada deprecated the field in favour of propagateDeps and none of
// its controllers reads it, so a policy setting it propagates no
// dependency there either; accepting it here would let a user believe the
// referenced ConfigMaps and Secrets follow the workload. false (the
// default, which kubectl prints back) stays accepted.
const AssociationRefusal = "association is deprecated in Karmada and has no effect there or here; " +
	"set propagateDeps: true to make referenced ConfigMaps, Secrets, ServiceAccounts and PVCs follow the workload, " +
	"and remove association"

// validateResourceSelectors checks apiVersion, kind and the label selector.
func validateResourceSelectors(selectors []ResourceSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rs := range selectors {
		p := fldPath.Index(i)
		if rs.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), ""))
		}
		if rs.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
		errs = append(errs, validateLabelSelector(rs.LabelSelector, p.Child("labelSelector"))...)
	}
	return errs
}

// validateLabelSelector checks a label selector the way the apiserver does,
// and that it can be turned into a selector.
func validateLabelSelector(ls *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	if ls == nil {
		return nil
	}
	errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, fldPath)
	if len(errs) == 0 {
		if _, err := metav1.LabelSelectorAsSelector(ls); err != nil {
			errs = append(errs, field.Invalid(fldPath, ls.String(), err.Error()))
		}
	}
	return errs
}

// validateFailover checks application and cluster failover.
func validateFailover(f *FailoverBehavior, fldPath *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if app := f.Application; app != nil {
		p := fldPath.Child("application")
		if t := app.DecisionConditions.TolerationSeconds; t != nil && *t < 0 {
			errs = append(errs, field.Invalid(p.Child("decisionConditions", "tolerationSeconds"), *t, "must be greater than or equal to 0"))
		}
		errs = append(errs, validatePurgeMode(app.PurgeMode, p.Child("purgeMode"))...)
		gp := p.Child("gracePeriodSeconds")
		switch {
		case isGraceful(app.PurgeMode) && app.GracePeriodSeconds == nil:
			errs = append(errs, field.Required(gp, "should not be empty when purgeMode is Gracefully"))
		case isGraceful(app.PurgeMode) && *app.GracePeriodSeconds <= 0:
			errs = append(errs, field.Invalid(gp, *app.GracePeriodSeconds, "must be greater than 0"))
		case !isGraceful(app.PurgeMode) && app.PurgeMode != "" && app.GracePeriodSeconds != nil:
			errs = append(errs, field.Invalid(gp, *app.GracePeriodSeconds, "only takes effect when purgeMode is Gracefully"))
		}
		errs = append(errs, validateStatePreservation(app.StatePreservation, p.Child("statePreservation"))...)
	}
	if c := f.Cluster; c != nil {
		p := fldPath.Child("cluster")
		errs = append(errs, validatePurgeMode(c.PurgeMode, p.Child("purgeMode"))...)
		errs = append(errs, validateStatePreservation(c.StatePreservation, p.Child("statePreservation"))...)
	}
	return errs
}

func validatePurgeMode(m PurgeMode, fldPath *field.Path) field.ErrorList {
	return enum(fldPath, m, PurgeModeDirectly, PurgeModeGracefully, PurgeModeNever, PurgeModeImmediately, PurgeModeGraciously)
}

// validateStatePreservation checks each rule's label name and JSONPath.
func validateStatePreservation(sp *StatePreservation, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	if len(sp.Rules) == 0 {
		errs = append(errs, field.Required(fldPath.Child("rules"), ""))
	}
	for i, r := range sp.Rules {
		p := fldPath.Child("rules").Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(r.AliasLabelName, p.Child("aliasLabelName"))...)
		if r.JSONPath == "" {
			errs = append(errs, field.Required(p.Child("jsonPath"), ""))
		}
	}
	return errs
}

// validateSuspension forbids suspending everything and some clusters at once.
func validateSuspension(s *Suspension, fldPath *field.Path) field.ErrorList {
	if s == nil || s.Dispatching == nil || !*s.Dispatching ||
		s.DispatchingOnClusters == nil || len(s.DispatchingOnClusters.ClusterNames) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("dispatching"), *s.Dispatching,
		"suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")}
}

// enum checks that v is empty or one of valid.
func enum[T ~string](fldPath *field.Path, v T, valid ...T) field.ErrorList {
	if v == "" || sets.New(valid...).Has(v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, v, valid)}
}

// requiredEnum checks that v is one of valid.
func requiredEnum[T ~string](fldPath *field.Path, v T, valid ...T) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must be one of %q", valid))}
	}
	return enum(fldPath, v, valid...)
}
