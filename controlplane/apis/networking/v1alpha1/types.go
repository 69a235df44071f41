package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// MultiClusterService serves the Service of its own namespace and name
// across clusters: the consumer clusters get the provider clusters'
// endpoints of it, under the Service's own name.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mcs,categories=flotilla
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="ServiceApplied")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the exposure.
	Spec api.MultiClusterServiceSpec `json:"spec"`

	// Status is what the control plane last made of the exposure.
	// +optional
	Status api.MultiClusterServiceStatus `json:"status,omitempty"`
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

// Engine is the MultiClusterService as controlplane/api's type.
func (m *MultiClusterService) Engine() api.MultiClusterService {
	return api.MultiClusterService{ObjectMeta: *m.ObjectMeta.DeepCopy(), Spec: *m.Spec.DeepCopy(), Status: *m.Status.DeepCopy()}
}

// Validate returns what is wrong with the MultiClusterService; nil when valid.
func (m *MultiClusterService) Validate() field.ErrorList {
	e := m.Engine()
	return api.ValidateMultiClusterService(&e)
}

func init() {
	SchemeBuilder.Register(&MultiClusterService{}, &MultiClusterServiceList{})
}
