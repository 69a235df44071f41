// Package v1alpha1 is config.flotilla.io/v1alpha1:
// ResourceInterpreterCustomization, with Karmada's spec, which the control
// plane reads to interpret custom resources (controlplane/interpret). It
// holds types only and must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=config.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is config.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "config.flotilla.io", Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
