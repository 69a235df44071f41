package api

import (
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// allOperators are the operators most overriders accept.
func allOperators() []OverriderOperator {
	return []OverriderOperator{OverriderOpAdd, OverriderOpRemove, OverriderOpReplace}
}

// ValidateOverrideSpec validates an override spec rooted at fldPath. As in
// Karmada, overrideRules cannot be combined with the deprecated top-level
// targetCluster or overriders.
func ValidateOverrideSpec(spec *OverrideSpec, fldPath *field.Path) field.ErrorList {
	errs := validateResourceSelectors(spec.ResourceSelectors, fldPath.Child("resourceSelectors"))
	if len(spec.OverrideRules) > 0 {
		if spec.TargetCluster != nil {
			errs = append(errs, field.Forbidden(fldPath.Child("targetCluster"), "overrideRules and targetCluster can't co-exist"))
		}
		if !spec.Overriders.IsEmpty() {
			errs = append(errs, field.Forbidden(fldPath.Child("overriders"), "overrideRules and overriders can't co-exist"))
		}
	}
	errs = append(errs, ValidateClusterAffinity(spec.TargetCluster, fldPath.Child("targetCluster"))...)
	errs = append(errs, validateOverriders(&spec.Overriders, fldPath.Child("overriders"))...)
	for i := range spec.OverrideRules {
		rule := &spec.OverrideRules[i]
		p := fldPath.Child("overrideRules").Index(i)
		errs = append(errs, ValidateClusterAffinity(rule.TargetCluster, p.Child("targetCluster"))...)
		errs = append(errs, validateOverriders(&rule.Overriders, p.Child("overriders"))...)
	}
	return errs
}

// validateOverriders checks every overrider of one rule.
func validateOverriders(o *Overriders, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, pt := range o.Plaintext {
		p := fldPath.Child("plaintext").Index(i)
		errs = append(errs, validatePointer(pt.Path, p.Child("path"))...)
		errs = append(errs, requiredEnum(p.Child("operator"), pt.Operator, allOperators()...)...)
		errs = append(errs, validateRemoveValue(pt.Operator, pt.Value, p.Child("value"))...)
	}
	for i, im := range o.ImageOverrider {
		p := fldPath.Child("imageOverrider").Index(i)
		if im.Predicate != nil {
			errs = append(errs, validatePointer(im.Predicate.Path, p.Child("predicate", "path"))...)
		}
		errs = append(errs, requiredEnum(p.Child("component"), im.Component, Registry, Repository, Tag)...)
		errs = append(errs, requiredEnum(p.Child("operator"), im.Operator, allOperators()...)...)
		if im.Operator != OverriderOpRemove && im.Operator != "" && im.Value == "" {
			errs = append(errs, field.Required(p.Child("value"), "must not be empty when operator is add or replace"))
		}
	}
	errs = append(errs, validateCommandArgs(o.CommandOverrider, fldPath.Child("commandOverrider"))...)
	errs = append(errs, validateCommandArgs(o.ArgsOverrider, fldPath.Child("argsOverrider"))...)
	for i, l := range o.LabelsOverrider {
		p := fldPath.Child("labelsOverrider").Index(i)
		errs = append(errs, requiredEnum(p.Child("operator"), l.Operator, allOperators()...)...)
		errs = append(errs, metav1validation.ValidateLabels(l.Value, p.Child("value"))...)
	}
	for i, a := range o.AnnotationsOverrider {
		p := fldPath.Child("annotationsOverrider").Index(i)
		errs = append(errs, requiredEnum(p.Child("operator"), a.Operator, allOperators()...)...)
		errs = append(errs, apivalidation.ValidateAnnotations(a.Value, p.Child("value"))...)
	}
	for i := range o.FieldOverrider {
		errs = append(errs, validateFieldOverrider(&o.FieldOverrider[i], fldPath.Child("fieldOverrider").Index(i))...)
	}
	return errs
}

// validateCommandArgs checks command or args overriders: a container name
// and the add or remove operator.
func validateCommandArgs(list []CommandArgsOverrider, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range list {
		p := fldPath.Index(i)
		if c.ContainerName == "" {
			errs = append(errs, field.Required(p.Child("containerName"), ""))
		}
		errs = append(errs, requiredEnum(p.Child("operator"), c.Operator, OverriderOpAdd, OverriderOpRemove)...)
	}
	return errs
}

// validateFieldOverrider needs exactly one of json and yaml, and JSON
// pointers for the field and every sub path.
func validateFieldOverrider(f *FieldOverrider, fldPath *field.Path) field.ErrorList {
	errs := validatePointer(f.FieldPath, fldPath.Child("fieldPath"))
	switch {
	case len(f.JSON) > 0 && len(f.YAML) > 0:
		errs = append(errs, field.Forbidden(fldPath.Child("yaml"), "json and yaml cannot be set together; only one is allowed"))
	case len(f.JSON) == 0 && len(f.YAML) == 0:
		errs = append(errs, field.Required(fldPath, "one of json or yaml must be set"))
	}
	for i, op := range f.JSON {
		p := fldPath.Child("json").Index(i)
		errs = append(errs, validatePointer(op.SubPath, p.Child("subPath"))...)
		errs = append(errs, requiredEnum(p.Child("operator"), op.Operator, allOperators()...)...)
		errs = append(errs, validateRemoveValue(op.Operator, op.Value, p.Child("value"))...)
	}
	for i, op := range f.YAML {
		p := fldPath.Child("yaml").Index(i)
		errs = append(errs, validatePointer(op.SubPath, p.Child("subPath"))...)
		errs = append(errs, requiredEnum(p.Child("operator"), op.Operator, allOperators()...)...)
		errs = append(errs, validateRemoveValue(op.Operator, op.Value, p.Child("value"))...)
	}
	return errs
}

// validatePointer requires a JSON pointer (RFC 6901): "/" then the path.
func validatePointer(path string, fldPath *field.Path) field.ErrorList {
	if path == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !strings.HasPrefix(path, "/") {
		return field.ErrorList{field.Invalid(fldPath, path, "path should be start with / character")}
	}
	return nil
}

// validateRemoveValue forbids a value on remove.
func validateRemoveValue(op OverriderOperator, v apiextensionsv1.JSON, fldPath *field.Path) field.ErrorList {
	if op == OverriderOpRemove && len(v.Raw) > 0 && string(v.Raw) != "null" {
		return field.ErrorList{field.Forbidden(fldPath, "value must be empty when operator is remove")}
	}
	return nil
}
