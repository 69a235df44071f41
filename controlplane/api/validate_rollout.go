package api

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRollout validates a rollout strategy rooted at fldPath
// ("spec.rollout"); nil is valid (no staged rollout). Stage names are
// DNS-1123 labels, unique, and not the implicit stage's name; only the last
// stage may omit clusterAffinity (it takes the rest); bounds as documented
// on the types.
func ValidateRollout(r *RolloutStrategy, fldPath *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	stagesPath := fldPath.Child("stages")
	switch {
	case len(r.Stages) == 0:
		errs = append(errs, field.Required(stagesPath, "a rollout needs at least one stage"))
	case len(r.Stages) > MaxRolloutStages:
		errs = append(errs, field.TooMany(stagesPath, len(r.Stages), MaxRolloutStages))
	}
	seen := sets.New[string]()
	for i := range r.Stages {
		s := &r.Stages[i]
		p := stagesPath.Index(i)
		errs = append(errs, validateStageName(s.Name, seen, p.Child("name"))...)
		if s.ClusterAffinity == nil && i != len(r.Stages)-1 {
			errs = append(errs, field.Required(p.Child("clusterAffinity"),
				"only the last stage may omit clusterAffinity (it then takes every scheduled cluster no earlier stage took)"))
		}
		errs = append(errs, ValidateClusterAffinity(s.ClusterAffinity, p.Child("clusterAffinity"))...)
		if m := s.MaxConcurrentClusters; m != nil && *m < 1 {
			errs = append(errs, field.Invalid(p.Child("maxConcurrentClusters"), *m, "must be greater than or equal to 1"))
		}
		errs = append(errs, validateGate(s.Gate, p.Child("gate"))...)
	}
	errs = append(errs, enum(fldPath.Child("onGateFailure"), r.OnGateFailure, RolloutHalt, RolloutRollback)...)
	return errs
}

// validateStageName checks one stage name and records it in seen.
func validateStageName(name string, seen sets.Set[string], fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "a stage needs a name (a DNS-1123 label), used in plans, status and errors")}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	if name == RemainingStageName {
		errs = append(errs, field.Invalid(fldPath, name,
			"is the name of the implicit last stage that takes the clusters no stage selects; choose another name"))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(fldPath, name))
	}
	seen.Insert(name)
	return errs
}

// validateGate checks a gate's bounds; nil is valid (the defaults).
func validateGate(g *RolloutGate, fldPath *field.Path) field.ErrorList {
	if g == nil {
		return nil
	}
	var errs field.ErrorList
	if g.BakeSeconds < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("bakeSeconds"), g.BakeSeconds, "must be greater than or equal to 0"))
	}
	if g.MaxUnhealthyClusters < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("maxUnhealthyClusters"), g.MaxUnhealthyClusters, "must be greater than or equal to 0"))
	}
	if t := g.TimeoutSeconds; t != nil && *t < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("timeoutSeconds"), *t, "must be greater than or equal to 1"))
	}
	return errs
}
