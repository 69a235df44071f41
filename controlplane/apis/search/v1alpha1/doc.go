// Package v1alpha1 is search.flotilla.io/v1alpha1: ResourceRegistry, which
// says which kinds of which member clusters the control plane caches and
// serves through its aggregated API (controlplane/fleetview), after
// Karmada's search.karmada.io ResourceRegistry. It holds types only and
// must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=search.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is search.flotilla.io/v1alpha1, or Karmada's
	// search.karmada.io/v1alpha1 once apis.Use chooses Karmada's groups.
	GroupVersion = schema.GroupVersion{Group: "search.flotilla.io", Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
