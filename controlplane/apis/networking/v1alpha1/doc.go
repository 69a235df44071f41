// Package v1alpha1 is networking.flotilla.io/v1alpha1: MultiClusterService,
// with Karmada's networking.karmada.io spec (CrossCluster only). Its CRD is
// installed only while multi-cluster services are on, so it is generated
// apart from flotilla's other CRDs (controlplane/apis/crd/networking). It
// holds types only and must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=networking.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is networking.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: api.FlotillaNetworkingGroup, Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
