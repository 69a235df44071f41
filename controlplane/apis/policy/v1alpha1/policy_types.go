package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// PropagationPolicy says which clusters receive the templates it selects in
// its own namespace; Karmada's spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pp,categories=flotilla
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule.
	Spec api.PropagationSpec `json:"spec"`
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

// ClusterPropagationPolicy is the cluster-wide PropagationPolicy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpp,categories=flotilla
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule.
	Spec api.PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicy.
//
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the policies.
	Items []ClusterPropagationPolicy `json:"items"`
}

// OverridePolicy changes templates per cluster in its own namespace; Karmada's spec.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=op,categories=flotilla
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override rule.
	Spec api.OverrideSpec `json:"spec"`
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

// ClusterOverridePolicy is the cluster-wide OverridePolicy.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cop,categories=flotilla
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the override rule.
	Spec api.OverrideSpec `json:"spec"`
}

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
//
// +kubebuilder:object:root=true
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the policies.
	Items []ClusterOverridePolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&PropagationPolicy{}, &PropagationPolicyList{},
		&ClusterPropagationPolicy{}, &ClusterPropagationPolicyList{},
		&OverridePolicy{}, &OverridePolicyList{},
		&ClusterOverridePolicy{}, &ClusterOverridePolicyList{},
	)
}
