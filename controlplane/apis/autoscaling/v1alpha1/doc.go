// Package v1alpha1 is autoscaling.flotilla.io/v1alpha1: FederatedHPA and
// CronFederatedHPA, with Karmada's autoscaling.karmada.io specs and
// statuses. It holds types only and must not import client-go.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.flotilla.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/scheme"
)

var (
	// GroupVersion is autoscaling.flotilla.io/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: api.FlotillaAutoscalingGroup, Version: "v1alpha1"}
	// SchemeBuilder registers this group version's kinds.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds this group version's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
