package api

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is a member cluster: where it is (provider, region, zones), how to
// reach it, its taints and, in Status, the facts the scheduler filters and
// scores on. It mirrors Karmada's cluster.karmada.io/v1alpha1 Cluster.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired, user-declared state of the member cluster.
	Spec ClusterSpec `json:"spec"`

	// Status is the observed state of the member cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSyncMode says whether the control plane pushes to the member or an
// agent in the member pulls.
type ClusterSyncMode string

const (
	// Push means the control plane talks to the member's apiserver directly.
	Push ClusterSyncMode = "Push"
	// Pull means an agent inside the member pulls works from the control plane.
	Pull ClusterSyncMode = "Pull"
)

// ClusterSpec is the declared state of a member cluster.
type ClusterSpec struct {
	// ID is the unique identifier of the member cluster (usually the
	// kube-system namespace UID).
	// +optional
	ID string `json:"id,omitempty"`

	// SyncMode is Push or Pull.
	// +optional
	SyncMode ClusterSyncMode `json:"syncMode,omitempty"`

	// APIEndpoint is the member's apiserver: hostname, hostname:port, IP or IP:port.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// SecretRef names the secret holding the member's credentials.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// ImpersonatorSecretRef names the secret holding the impersonator token.
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// InsecureSkipTLSVerification turns off verification of the member's
	// serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// ProxyURL is the proxy used to reach the member.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// ProxyHeader holds extra HTTP headers sent to the proxy.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// Provider is the cloud provider of the member.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region the member is in.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone the member is in.
	// Deprecated: Karmada replaced it with Zones.
	// +optional
	Zone string `json:"zone,omitempty"`

	// Zones are the zones the member spans.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Taints repel templates that do not tolerate them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ResourceModels grade nodes by capacity for the estimator.
	// +optional
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// LocalSecretReference names a secret by namespace and name.
type LocalSecretReference struct {
	// Namespace of the secret.
	Namespace string `json:"namespace"`
	// Name of the secret.
	Name string `json:"name"`
}

// ResourceModel is one capacity grade of the member's nodes.
type ResourceModel struct {
	// Grade is the index of this model; higher grades hold bigger nodes.
	Grade uint `json:"grade"`
	// Ranges bound each resource of a node in this grade.
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange is a half-open range [Min, Max) of one resource.
type ResourceModelRange struct {
	// Name is the resource, such as cpu or memory.
	Name corev1.ResourceName `json:"name"`
	// Min is the inclusive lower bound.
	Min resource.Quantity `json:"min"`
	// Max is the exclusive upper bound.
	Max resource.Quantity `json:"max"`
}

// ClusterStatus is the observed state of a member cluster.
type ClusterStatus struct {
	// KubernetesVersion is the member's apiserver version.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// APIEnablements lists the API resources the member serves.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// Conditions of the member, Ready among them.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NodeSummary counts the member's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// ResourceSummary sums the member's node resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// RemedyActions are the actions the remedy controller asks for.
	// +optional
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement lists the resources one group version serves.
type APIEnablement struct {
	// GroupVersion is "group/version", or "v1" for the core group.
	GroupVersion string `json:"groupVersion"`
	// Resources served in that group version.
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is one served resource.
type APIResource struct {
	// Name is the plural resource name, such as deployments.
	Name string `json:"name"`
	// Kind is the kind, such as Deployment.
	Kind string `json:"kind"`
}

// NodeSummary counts a member's nodes.
type NodeSummary struct {
	// TotalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`
	// ReadyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums a member's node resources.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is what pending pods request.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is what scheduled pods request.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// AllocatableModelings counts nodes per resource model grade.
	// +optional
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes in one resource model grade.
type AllocatableModeling struct {
	// Grade is the ResourceModel grade.
	Grade uint `json:"grade"`
	// Count is the number of nodes in that grade.
	Count int `json:"count"`
}
