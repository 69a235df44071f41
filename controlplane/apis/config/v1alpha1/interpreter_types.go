package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ResourceInterpreterCustomization teaches the control plane a kind with
// Lua scripts; Karmada's config.karmada.io spec under flotilla's group.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=ric,categories=flotilla
// +kubebuilder:printcolumn:name="Target-API-Version",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="Target-Kind",type=string,JSONPath=`.spec.target.kind`
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the target kind and its scripts.
	Spec api.ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationList is a list of
// ResourceInterpreterCustomization.
//
// +kubebuilder:object:root=true
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the customizations.
	Items []ResourceInterpreterCustomization `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceInterpreterCustomization{}, &ResourceInterpreterCustomizationList{})
}

// Engine returns the customization as controlplane/api models it.
func (r *ResourceInterpreterCustomization) Engine() api.ResourceInterpreterCustomization {
	return api.ResourceInterpreterCustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.ConfigGroupVersion.String(), Kind: api.KindResourceInterpreterCustomization},
		ObjectMeta: *r.ObjectMeta.DeepCopy(),
		Spec:       *r.Spec.DeepCopy(),
	}
}
