package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ResourceBinding ties one resource template to the policy that claimed it
// and to its scheduling result (spec.clusters). It lives in the template's
// namespace and is named after it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rb,categories=flotilla
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resource.kind`
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.resource.name`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template reference, its requirements and the result.
	Spec api.ResourceBindingSpec `json:"spec"`

	// Status is the scheduler's and the members' report.
	// +optional
	Status api.ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingList is a list of ResourceBinding.
//
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the bindings.
	Items []ResourceBinding `json:"items"`
}

// Engine returns the binding in the engine's form.
func (b *ResourceBinding) Engine() api.ResourceBinding {
	return api.ResourceBinding{ObjectMeta: b.ObjectMeta, Spec: b.Spec, Status: b.Status}
}

// ClusterResourceBinding is the ResourceBinding of a cluster-scoped
// template (a Namespace, ClusterRole, CustomResourceDefinition or
// cluster-scoped custom kind), claimed by a ClusterPropagationPolicy only:
// Karmada's ClusterResourceBinding, with the same spec. Being
// cluster-scoped itself, it is written only by cluster-level identities.
// It is named after its template as a ResourceBinding is.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=crb,categories=flotilla
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.resource.kind`
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.resource.name`
// +kubebuilder:printcolumn:name="Scheduled",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FullyApplied",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template reference, its requirements and the result.
	Spec api.ResourceBindingSpec `json:"spec"`

	// Status is the scheduler's and the members' report.
	// +optional
	Status api.ResourceBindingStatus `json:"status,omitempty"`
}

// ClusterResourceBindingList is a list of ClusterResourceBinding.
//
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the bindings.
	Items []ClusterResourceBinding `json:"items"`
}

// Work is the rendered objects for one member cluster; Karmada's spec. The
// binding controller writes one per scheduled cluster in the cluster's
// execution namespace (flotilla-es-<cluster>); the execution controller
// applies it and sets Applied, the work status controller reads the objects
// back and sets Available and the manifest statuses.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=flotilla
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the manifests.
	Spec api.WorkSpec `json:"spec"`

	// Status is the member's report on the manifests.
	// +optional
	Status api.WorkStatus `json:"status,omitempty"`
}

// WorkList is a list of Work.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the works.
	Items []Work `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceBinding{}, &ResourceBindingList{}, &ClusterResourceBinding{}, &ClusterResourceBindingList{}, &Work{}, &WorkList{})
}
