// Package v1alpha1 is work.flotilla.io/v1alpha1: ResourceBinding (one
// template and where it goes), ClusterResourceBinding (the same for a
// cluster-scoped template) and Work (the rendered objects for one member),
// with Karmada's specs. Karmada serves ResourceBinding as v1alpha2; flotilla
// starts its own group at v1alpha1. It holds types only and must not import
// client-go.
//
// +kubebuilder:object:generate=true
// +groupName=work.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is work.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "work.flotilla.io", Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
