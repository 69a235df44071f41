package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// FederatedResourceQuotaObservation is the host quota's status: the limit
// as enforced and what the namespace uses.
type FederatedResourceQuotaObservation struct {
	// Overall is the overall limit as the control plane last enforced it.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`
	// OverallUsed is what the namespace's scheduled templates request in
	// every cluster together.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`
	// AggregatedStatus is each assigned cluster's ResourceQuota status.
	// +optional
	AggregatedStatus []api.ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// FederatedResourceQuotaSpec is the desired state of a
// FederatedResourceQuota.
type FederatedResourceQuotaSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider is Karmada's FederatedResourceQuota spec.
	ForProvider api.FederatedResourceQuotaSpec `json:"forProvider"`
}

// FederatedResourceQuotaStatus is the observed state of a
// FederatedResourceQuota.
type FederatedResourceQuotaStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the host quota's status.
	// +optional
	AtProvider FederatedResourceQuotaObservation `json:"atProvider,omitempty"`
}

// FederatedResourceQuota is a policy.flotilla.io FederatedResourceQuota in
// the host, limiting this resource's namespace, named after the external
// name (default: this resource's name). It is a fleet administrator's
// kind: whoever writes it sets a tenant's limit, so grant it as Clusters
// are granted, never to the namespace's tenant. It never adopts a host
// quota it did not create.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=`.metadata.annotations.crossplane\.io/external-name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec FederatedResourceQuotaSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
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

func init() {
	SchemeBuilder.Register(&FederatedResourceQuota{}, &FederatedResourceQuotaList{})
}
