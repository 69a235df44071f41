// Package v1alpha1 is cluster.flotilla.io/v1alpha1: the Cluster kind, a
// member cluster with Karmada's ClusterSpec facts and a credentials
// secretRef. It holds types only and must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is cluster.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: "cluster.flotilla.io", Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
