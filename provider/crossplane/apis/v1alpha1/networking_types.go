package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// MultiClusterServiceSpec is the desired state of a MultiClusterService.
type MultiClusterServiceSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's MultiClusterService spec: the exposure
	// types (CrossCluster only) and the provider and consumer clusters of
	// the Service of this resource's namespace and external name.
	ForProvider api.MultiClusterServiceSpec `json:"forProvider"`
}

// MultiClusterServiceStatus is the observed state of a MultiClusterService.
type MultiClusterServiceStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the host MultiClusterService's status: its
	// ServiceApplied condition, which names the providers and consumers
	// and why each listed cluster is left out.
	// +optional
	AtProvider api.MultiClusterServiceStatus `json:"atProvider,omitempty"`
}

// MultiClusterService is a networking.flotilla.io MultiClusterService in
// the host (networking.karmada.io where the provider serves Karmada's
// groups), in this resource's namespace and named after the external name
// (default: this resource's name): the continuous control plane gives the
// consumer clusters the provider clusters' endpoints of the Service of
// that namespace and name. It reaches only that namespace's Service, so a
// namespace's tenant may be granted it; an unowned host
// MultiClusterService of the same name is adopted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.atProvider.conditions[?(@.type=='ServiceApplied')].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec MultiClusterServiceSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status MultiClusterServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceList is a list of MultiClusterService.
//
// +kubebuilder:object:root=true
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the MultiClusterServices.
	Items []MultiClusterService `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MultiClusterService{}, &MultiClusterServiceList{})
}
