// Package v1alpha1 is policy.flotilla.io/v1alpha1: PropagationPolicy,
// ClusterPropagationPolicy, OverridePolicy, ClusterOverridePolicy and
// FederatedResourceQuota, with Karmada's specs. It holds types only and
// must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=policy.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is policy.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "policy.flotilla.io", Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
