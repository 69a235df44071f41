package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// FederatedHPASpec is the desired state of a FederatedHPA.
type FederatedHPASpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's FederatedHPA spec (autoscaling/v2's
	// HorizontalPodAutoscaler spec): the target template in this
	// resource's namespace, the bounds, the metrics and the behavior.
	ForProvider api.FederatedHPASpec `json:"forProvider"`
}

// FederatedHPAStatus is the observed state of a FederatedHPA.
type FederatedHPAStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the host FederatedHPA's status: current and desired
	// replicas, each metric's current value, and the AbleToScale,
	// ScalingActive and ScalingLimited conditions (which name the
	// members whose pods were not measured).
	// +optional
	AtProvider autoscalingv2.HorizontalPodAutoscalerStatus `json:"atProvider,omitempty"`
}

// FederatedHPA is an autoscaling.flotilla.io FederatedHPA in the host,
// in this resource's namespace and named after the external name
// (default: this resource's name). The continuous control plane reads the
// target's pods' metrics in every member and sets the template's
// replicas. Like a policy, it acts only in its own namespace, so a
// namespace's tenant may be granted it; an unowned host FederatedHPA of
// the same name is adopted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="CURRENT",type=integer,JSONPath=`.status.atProvider.currentReplicas`
// +kubebuilder:printcolumn:name="DESIRED",type=integer,JSONPath=`.status.atProvider.desiredReplicas`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec FederatedHPASpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status FederatedHPAStatus `json:"status,omitempty"`
}

// FederatedHPAList is a list of FederatedHPA.
//
// +kubebuilder:object:root=true
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the autoscalers.
	Items []FederatedHPA `json:"items"`
}

// CronFederatedHPASpec is the desired state of a CronFederatedHPA.
type CronFederatedHPASpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's CronFederatedHPA spec: the target (a
	// template or a FederatedHPA of this resource's namespace) and the
	// scheduled rules.
	ForProvider api.CronFederatedHPASpec `json:"forProvider"`
}

// CronFederatedHPAStatus is the observed state of a CronFederatedHPA.
type CronFederatedHPAStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the host CronFederatedHPA's status: each rule's
	// execution history.
	// +optional
	AtProvider api.CronFederatedHPAStatus `json:"atProvider,omitempty"`
}

// CronFederatedHPA is an autoscaling.flotilla.io CronFederatedHPA in the
// host, in this resource's namespace and named after the external name
// (default: this resource's name), which scales a template or a
// FederatedHPA's bounds on a schedule. An unowned host CronFederatedHPA
// of the same name is adopted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec CronFederatedHPASpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPAList is a list of CronFederatedHPA.
//
// +kubebuilder:object:root=true
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the scheduled autoscalers.
	Items []CronFederatedHPA `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FederatedHPA{}, &FederatedHPAList{}, &CronFederatedHPA{}, &CronFederatedHPAList{})
}
