package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// FederatedResourceQuota is one quota for its namespace across the fleet;
// Karmada's spec and status. Who may write it is the fleet's operator, not
// the namespace's tenant: the chart grants tenants read access only.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=frq,categories=flotilla
// +kubebuilder:printcolumn:name="Overall",type=string,JSONPath=`.status.overall`
// +kubebuilder:printcolumn:name="Overall_Used",type=string,JSONPath=`.status.overallUsed`
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the quota.
	Spec api.FederatedResourceQuotaSpec `json:"spec"`

	// Status is the enforced quota and its observed use.
	// +optional
	Status api.FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// FederatedResourceQuotaList is a list of FederatedResourceQuota.
//
// +kubebuilder:object:root=true
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the quotas.
	Items []FederatedResourceQuota `json:"items"`
}

// Engine is the quota as controlplane/api's type, for validation and the
// synchronous driver.
func (q *FederatedResourceQuota) Engine() api.FederatedResourceQuota {
	return api.FederatedResourceQuota{ObjectMeta: *q.ObjectMeta.DeepCopy(), Spec: *q.Spec.DeepCopy(), Status: *q.Status.DeepCopy()}
}

// Validate returns what is wrong with the quota; nil when it is valid.
func (q *FederatedResourceQuota) Validate() field.ErrorList {
	e := q.Engine()
	return api.ValidateFederatedResourceQuota(&e)
}

func init() {
	SchemeBuilder.Register(&FederatedResourceQuota{}, &FederatedResourceQuotaList{})
}
