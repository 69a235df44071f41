package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// PropagationPolicyObservation is what the control plane did with the policy.
type PropagationPolicyObservation struct {
	// Templates are the resource templates this policy claims, as
	// "<kind>/<name>", from the host's ResourceBindings.
	// +optional
	Templates []string `json:"templates,omitempty"`
}

// PropagationPolicySpec is the desired state of a PropagationPolicy.
type PropagationPolicySpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's PropagationPolicy spec.
	ForProvider api.PropagationSpec `json:"forProvider"`
}

// PropagationPolicyStatus is the observed state of a PropagationPolicy.
type PropagationPolicyStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is what the control plane did with the policy.
	// +optional
	AtProvider PropagationPolicyObservation `json:"atProvider,omitempty"`
}

// PropagationPolicy is a policy.flotilla.io PropagationPolicy in the host,
// in this resource's namespace, named after the external name (default:
// this resource's name). It selects templates in that namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=`.metadata.annotations.crossplane\.io/external-name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec PropagationPolicySpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status PropagationPolicyStatus `json:"status,omitempty"`
}

// PropagationPolicyList is a list of PropagationPolicy.
//
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the policies.
	Items []PropagationPolicy `json:"items"`
}

// OverridePolicyObservation is the observed state of the host OverridePolicy.
type OverridePolicyObservation struct {
	// Rules is how many override rules the host policy holds.
	// +optional
	Rules int `json:"rules,omitempty"`
}

// OverridePolicySpec is the desired state of an OverridePolicy.
type OverridePolicySpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's OverridePolicy spec.
	ForProvider api.OverrideSpec `json:"forProvider"`
}

// OverridePolicyStatus is the observed state of an OverridePolicy.
type OverridePolicyStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the observed state of the host policy.
	// +optional
	AtProvider OverridePolicyObservation `json:"atProvider,omitempty"`
}

// OverridePolicy is a policy.flotilla.io OverridePolicy in the host, in this
// resource's namespace, named after the external name (default: this
// resource's name).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=`.metadata.annotations.crossplane\.io/external-name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec OverridePolicySpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status OverridePolicyStatus `json:"status,omitempty"`
}

// OverridePolicyList is a list of OverridePolicy.
//
// +kubebuilder:object:root=true
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the policies.
	Items []OverridePolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&PropagationPolicy{}, &PropagationPolicyList{},
		&OverridePolicy{}, &OverridePolicyList{},
	)
}
