package api

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateTemplateMeta checks what every Kubernetes object's name and
// namespace must satisfy, whatever its kind, so that a template no member
// could store is refused before it is planned: a name of at most 253
// characters that is a valid path segment, and a namespace that is a DNS
// label. Kind-specific name rules are left to the members.
func ValidateTemplateMeta(tmpl *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	name := tmpl.GetName()
	if len(name) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), "", validation.DNS1123SubdomainMaxLength))
	}
	for _, msg := range content.IsPathSegmentName(name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
	}
	if ns := tmpl.GetNamespace(); ns != "" {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), ns, msg))
		}
	}
	return errs
}
