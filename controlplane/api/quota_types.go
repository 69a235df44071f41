package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindFederatedResourceQuota is the kind of FederatedResourceQuota.
const KindFederatedResourceQuota = "FederatedResourceQuota"

// FederatedResourceQuota is one quota for a namespace across the fleet: an
// overall limit on what the namespace's templates may request in all
// clusters together, and static per-cluster limits that become
// ResourceQuotas in those clusters. It mirrors Karmada's
// policy.karmada.io/v1alpha1 kind.
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the quota.
	Spec FederatedResourceQuotaSpec `json:"spec"`

	// Status is the quota as enforced and its observed use.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// FederatedResourceQuotaSpec is the desired quota.
type FederatedResourceQuotaSpec struct {
	// Overall is the limit per resource name for the namespace in every
	// cluster together (cpu, memory, requests.cpu, limits.memory, pods, ...).
	Overall corev1.ResourceList `json:"overall"`

	// StaticAssignments become a ResourceQuota, named after this object, in
	// the namespace of each listed cluster. A cluster not listed gets none.
	// +optional
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the limit of one cluster.
type StaticClusterAssignment struct {
	// ClusterName is the member cluster.
	ClusterName string `json:"clusterName"`

	// Hard is the cluster's ResourceQuota spec.hard.
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is the enforced quota and its observed use.
type FederatedResourceQuotaStatus struct {
	// Overall is the overall limit as last enforced.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`

	// OverallUsed is what the namespace's scheduled templates request in
	// every cluster together, per resource name of Overall.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`

	// AggregatedStatus is each assigned cluster's ResourceQuota status as
	// the member reports it, sorted by cluster name.
	// +optional
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is one cluster's ResourceQuota status.
type ClusterQuotaStatus struct {
	// ClusterName is the member cluster.
	ClusterName string `json:"clusterName"`

	corev1.ResourceQuotaStatus `json:",inline"`
}
