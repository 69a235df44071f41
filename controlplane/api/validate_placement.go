package api

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxAffinityNameLength is the CRD's maxLength for affinityName.
const maxAffinityNameLength = 32

// ValidatePlacement validates a placement rooted at fldPath.
func ValidatePlacement(p *Placement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.ClusterAffinity != nil && len(p.ClusterAffinities) > 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("clusterAffinities"), "clusterAffinities cannot co-exist with clusterAffinity"))
	}
	errs = append(errs, ValidateClusterAffinity(p.ClusterAffinity, fldPath.Child("clusterAffinity"))...)
	errs = append(errs, validateClusterAffinities(p, fldPath.Child("clusterAffinities"))...)
	errs = append(errs, validateTolerations(p.ClusterTolerations, fldPath.Child("clusterTolerations"))...)
	errs = append(errs, validateSpreadConstraints(p.SpreadConstraints, fldPath.Child("spreadConstraints"))...)
	errs = append(errs, validateReplicaScheduling(p.ReplicaScheduling, fldPath.Child("replicaScheduling"))...)
	if p.WorkloadAffinity != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("workloadAffinity"), WorkloadAffinityRefusal))
	}
	return errs
}

// WorkloadAffinityRefusal says why placement.workloadAffinity is refused in
// every front end. Karmada's scheduler keeps an in-memory index of every
// workload's affinity group and filters clusters by where the group's other
// workloads run (behind its alpha WorkloadAffinity gate). Flotilla's
// scheduler is a pure function of one template, its policy and the
// clusters; accepting the field and ignoring it would place co-located
// workloads apart without a word.
const WorkloadAffinityRefusal = "workloadAffinity is not supported: flotilla schedules each template on its own, " +
	"without an index of the other workloads' placements, so the affinity could not be kept; remove it"

// ValidateClusterAffinity validates a cluster affinity rooted at fldPath;
// nil is valid. Field selector keys must be provider, region or zone and,
// as in Karmada's webhook, operators In or NotIn.
func ValidateClusterAffinity(a *ClusterAffinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	errs := validateLabelSelector(a.LabelSelector, fldPath.Child("labelSelector"))
	if a.FieldSelector != nil {
		keys := []string{ProviderField, RegionField, ZoneField}
		ops := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}
		for i, expr := range a.FieldSelector.MatchExpressions {
			p := fldPath.Child("fieldSelector", "matchExpressions").Index(i)
			if !sets.New(keys...).Has(expr.Key) {
				errs = append(errs, field.NotSupported(p.Child("key"), expr.Key, keys))
			}
			if !sets.New(ops...).Has(expr.Operator) {
				errs = append(errs, field.NotSupported(p.Child("operator"), expr.Operator, ops))
			} else if len(expr.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), fmt.Sprintf("must be specified when operator is %s", expr.Operator)))
			}
		}
	}
	errs = append(errs, validateNames(a.ClusterNames, fldPath.Child("clusterNames"))...)
	errs = append(errs, validateNames(a.ExcludeClusters, fldPath.Child("exclude"))...)
	return errs
}

// validateNames forbids empty cluster names, which can never match.
func validateNames(names []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, n := range names {
		if n == "" {
			errs = append(errs, field.Required(fldPath.Index(i), "cluster name must not be empty"))
		}
	}
	return errs
}

// validateClusterAffinities checks names (non-empty, at most 32 characters,
// unique), each term's affinity, and overflow groups as Karmada v1.18 does.
func validateClusterAffinities(p *Placement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		tp := fldPath.Index(i)
		errs = append(errs, validateAffinityName(term.AffinityName, tp.Child("affinityName"))...)
		if term.AffinityName != "" {
			if seen.Has(term.AffinityName) {
				errs = append(errs, field.Duplicate(tp.Child("affinityName"), term.AffinityName))
			}
			seen.Insert(term.AffinityName)
		}
		errs = append(errs, ValidateClusterAffinity(&term.ClusterAffinity, tp)...)
		errs = append(errs, validateOverflow(term, p.ReplicaScheduling, tp)...)
	}
	return errs
}

func validateAffinityName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if len(name) > maxAffinityNameLength {
		return field.ErrorList{field.TooLong(fldPath, name, maxAffinityNameLength)}
	}
	return nil
}

// validateOverflow checks a term's overflowAffinities: the primary group
// must select something, names must be unique within the term and differ
// from the primary's, and overflow only makes sense when replicas are
// divided by available capacity (dynamic weight or Aggregated).
func validateOverflow(term *ClusterAffinityTerm, rs *ReplicaSchedulingStrategy, tp *field.Path) field.ErrorList {
	if len(term.OverflowAffinities) == 0 {
		return nil
	}
	var errs field.ErrorList
	op := tp.Child("overflowAffinities")
	if isEmptyAffinity(&term.ClusterAffinity) {
		errs = append(errs, field.Invalid(op, len(term.OverflowAffinities),
			"overflowAffinities can only be used together with the inline ClusterAffinity"))
	}
	if !capacityDivided(rs) {
		errs = append(errs, field.Invalid(op, len(term.OverflowAffinities),
			"overflowAffinities can only be used together with dynamic weight or aggregated scheduling"))
	}
	seen := sets.New(term.AffinityName)
	for j := range term.OverflowAffinities {
		o := &term.OverflowAffinities[j]
		p := op.Index(j)
		errs = append(errs, validateAffinityName(o.AffinityName, p.Child("affinityName"))...)
		if o.AffinityName != "" {
			if seen.Has(o.AffinityName) {
				errs = append(errs, field.Invalid(p.Child("affinityName"), o.AffinityName,
					"overflow affinity name must be unique and must not duplicate the primary group's affinityName"))
			}
			seen.Insert(o.AffinityName)
		}
		errs = append(errs, ValidateClusterAffinity(&o.ClusterAffinity, p)...)
	}
	return errs
}

func isEmptyAffinity(a *ClusterAffinity) bool {
	return a.LabelSelector == nil && a.FieldSelector == nil && len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0
}

// capacityDivided reports Divided replicas by dynamic weight or Aggregated.
func capacityDivided(rs *ReplicaSchedulingStrategy) bool {
	if rs == nil || rs.ReplicaSchedulingType != ReplicaSchedulingTypeDivided {
		return false
	}
	switch rs.ReplicaDivisionPreference {
	case ReplicaDivisionPreferenceAggregated:
		return true
	case ReplicaDivisionPreferenceWeighted:
		return rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
	}
	return false
}

// validateTolerations checks tolerations as the apiserver does for pods,
// but, like Karmada, only with the Equal and Exists operators.
func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect,
				"effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		errs = append(errs, enum(p.Child("effect"), t.Effect,
			corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
	}
	return errs
}

// validateSpreadConstraints follows Karmada's ValidateSpreadConstraint:
// field and label are exclusive, groups are non-negative with maxGroups at
// least minGroups, each field is used once, and spreading by any field
// needs a cluster spread constraint too.
func validateSpreadConstraints(constraints []SpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	fields := sets.New[SpreadFieldValue]()
	valid := []SpreadFieldValue{SpreadByFieldCluster, SpreadByFieldRegion, SpreadByFieldZone, SpreadByFieldProvider}
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.SpreadByField != "" && c.SpreadByLabel != "" {
			errs = append(errs, field.Forbidden(p.Child("spreadByLabel"), "spreadByLabel should not co-exist with spreadByField"))
		}
		if c.SpreadByLabel != "" {
			errs = append(errs, metav1validation.ValidateLabelName(c.SpreadByLabel, p.Child("spreadByLabel"))...)
		}
		errs = append(errs, enum(p.Child("spreadByField"), c.SpreadByField, valid...)...)
		if c.MaxGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, "maxGroups lower than 0 is not allowed"))
		}
		if c.MinGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("minGroups"), c.MinGroups, "minGroups lower than 0 is not allowed"))
		}
		if c.MaxGroups > 0 && c.MaxGroups < c.MinGroups {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, "maxGroups lower than minGroups is not allowed"))
		}
		if c.SpreadByField != "" {
			if fields.Has(c.SpreadByField) {
				errs = append(errs, field.Invalid(p.Child("spreadByField"), c.SpreadByField,
					fmt.Sprintf("multiple %s spread constraints are not allowed", c.SpreadByField)))
			}
			fields.Insert(c.SpreadByField)
		}
	}
	if fields.Len() > 0 && !fields.Has(SpreadByFieldCluster) {
		errs = append(errs, field.Invalid(fldPath, fields.Len(),
			"the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"))
	}
	return errs
}

// validateReplicaScheduling checks the enums, static weights (at least 1,
// valid targets) and that static and dynamic weights are not both set.
func validateReplicaScheduling(rs *ReplicaSchedulingStrategy, fldPath *field.Path) field.ErrorList {
	if rs == nil {
		return nil
	}
	errs := enum(fldPath.Child("replicaSchedulingType"), rs.ReplicaSchedulingType,
		ReplicaSchedulingTypeDuplicated, ReplicaSchedulingTypeDivided)
	errs = append(errs, enum(fldPath.Child("replicaDivisionPreference"), rs.ReplicaDivisionPreference,
		ReplicaDivisionPreferenceAggregated, ReplicaDivisionPreferenceWeighted)...)
	wp := rs.WeightPreference
	if wp == nil {
		return errs
	}
	wpPath := fldPath.Child("weightPreference")
	for i, w := range wp.StaticWeightList {
		p := wpPath.Child("staticWeightList").Index(i)
		if w.Weight < 1 {
			errs = append(errs, field.Invalid(p.Child("weight"), w.Weight, "must be greater than or equal to 1"))
		}
		errs = append(errs, ValidateClusterAffinity(&w.TargetCluster, p.Child("targetCluster"))...)
	}
	errs = append(errs, enum(wpPath.Child("dynamicWeight"), wp.DynamicWeight, DynamicWeightByAvailableReplicas)...)
	if wp.DynamicWeight != "" && len(wp.StaticWeightList) > 0 {
		errs = append(errs, field.Forbidden(wpPath.Child("dynamicWeight"), "dynamicWeight cannot co-exist with staticWeightList"))
	}
	return errs
}
