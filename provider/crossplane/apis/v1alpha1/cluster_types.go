package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// DefaultCredentialsKey is the key of a Cluster's credentials Secret that
// holds the member's kubeconfig when credentialsSecretRef names none.
const DefaultCredentialsKey = "kubeconfig"

// ClusterParameters are the member cluster's facts and credentials. They
// become the spec of the host's cluster.flotilla.io Cluster, so policies
// select on them as in Karmada.
type ClusterParameters struct {
	// APIEndpoint is the member's apiserver URL. With a kubeconfig credential
	// the kubeconfig's server is used; this is informational.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// Provider is the member's cloud provider.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region the member is in.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone the member is in (Karmada's deprecated single zone).
	// +optional
	Zone string `json:"zone,omitempty"`

	// Zones are the zones the member spans.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Taints repel templates whose policies do not tolerate them. The control
	// plane's own not-ready and unreachable taints are kept beside them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// Labels are set on the host Cluster object; policies' clusterAffinity
	// labelSelector matches them.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// ResourceModels grade the member's nodes by capacity for the estimator.
	// +optional
	ResourceModels []api.ResourceModel `json:"resourceModels,omitempty"`

	// InsecureSkipTLSVerification turns off verification of the member's
	// serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// ProxyURL is the proxy used to reach the member.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// SyncMode is Push (the default: the control plane reaches the member
	// with the kubeconfig of CredentialsSecretRef) or Pull (an agent beside
	// the member, `terraform-provider-flotilla agent`, serves it from the
	// hub's side: the control plane gets no credentials, so
	// CredentialsSecretRef must not be set).
	// +kubebuilder:validation:Enum=Push;Pull
	// +optional
	SyncMode api.ClusterSyncMode `json:"syncMode,omitempty"`

	// CredentialsSecretRef names a Secret in this resource's namespace that
	// holds the member's kubeconfig. It is copied into a Secret in the host's
	// flotilla-system namespace, which the host Cluster's spec.secretRef
	// names. Without it the control plane cannot reach the member and
	// reports it not Ready.
	// +optional
	CredentialsSecretRef *CredentialsSecretRef `json:"credentialsSecretRef,omitempty"`
}

// CredentialsSecretRef names a key of a Secret in the managed resource's namespace.
type CredentialsSecretRef struct {
	// Name of the Secret.
	Name string `json:"name"`
	// Key of the kubeconfig in the Secret.
	// +optional
	// +kubebuilder:default=kubeconfig
	Key string `json:"key,omitempty"`
}

// ClusterObservation is the host Cluster's live status, as the control
// plane's cluster status controller writes it.
type ClusterObservation struct {
	// Ready is the status of the host Cluster's Ready condition: True, False
	// or Unknown.
	// +optional
	Ready string `json:"ready,omitempty"`
	// Message explains Ready.
	// +optional
	Message string `json:"message,omitempty"`
	// KubernetesVersion is the member's apiserver version.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Taints are the host Cluster's taints, the control plane's included.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// ClusterSpec is the desired state of a Cluster.
type ClusterSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider are the member's facts and credentials.
	ForProvider ClusterParameters `json:"forProvider"`
}

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is the host Cluster's live status.
	// +optional
	AtProvider ClusterObservation `json:"atProvider,omitempty"`
}

// Cluster registers a member cluster with the flotilla host: a
// cluster.flotilla.io Cluster named after the external name (default: this
// resource's name) and a credentials Secret.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="EXTERNAL-NAME",type=string,JSONPath=`.metadata.annotations.crossplane\.io/external-name`
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.atProvider.kubernetesVersion`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec ClusterSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Cluster.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the clusters.
	Items []Cluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Cluster{}, &ClusterList{})
}
