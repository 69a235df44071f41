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
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:subresource:status
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the target kind and its scripts.
	Spec api.ResourceInterpreterCustomizationSpec `json:"spec"`
	// Status is the control plane's report on the customization; a
	// flotilla extension (Karmada's has none).
	// +optional
	Status ResourceInterpreterCustomizationStatus `json:"status,omitempty"`
}

// ConditionReady is the condition type that says whether the control plane
// runs a customization's scripts: False with ReasonRefused when they did
// not load, with ReasonBudgetExceeded when a call ran out of a budget (its
// kind is refused until the customization changes).
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	// ReasonLoaded: the scripts loaded and none exceeded a budget.
	ReasonLoaded = "Loaded"
	// ReasonRefused: the customization was refused when loaded.
	ReasonRefused = "Refused"
	// ReasonBudgetExceeded: a call of one of its scripts ran out of a
	// budget.
	ReasonBudgetExceeded = "BudgetExceeded"
)

// ResourceInterpreterCustomizationStatus is what the control plane reports
// on a customization.
type ResourceInterpreterCustomizationStatus struct {
	// Conditions holds Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
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
