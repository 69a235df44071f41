package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Keys of the credentials Secret that Cluster.spec.secretRef names. A Secret
// holds either a whole kubeconfig, or a bearer token with an optional CA
// bundle (Karmada's own layout for push-mode clusters).
const (
	// SecretKeyKubeconfig holds a kubeconfig; its current context is used.
	SecretKeyKubeconfig = "kubeconfig"
	// SecretKeyToken holds a bearer token, used with spec.apiEndpoint.
	SecretKeyToken = "token"
	// SecretKeyCA holds the PEM CA bundle that signed the member's serving certificate.
	SecretKeyCA = "caBundle"
)

// Cluster is a member cluster. Its spec is Karmada's ClusterSpec: the
// endpoint, the credentials secretRef and the facts policies select on
// (labels, provider, region, zones, taints). Its status is written by the
// cluster status controller.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=flotilla
// +kubebuilder:printcolumn:name="Endpoint",type=string,JSONPath=`.spec.apiEndpoint`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the declared state of the member cluster.
	Spec api.ClusterSpec `json:"spec"`

	// Status is the observed state of the member cluster.
	// +optional
	Status api.ClusterStatus `json:"status,omitempty"`
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

// Engine returns the cluster in the engine's form.
func (c *Cluster) Engine() api.Cluster {
	return api.Cluster{ObjectMeta: c.ObjectMeta, Spec: c.Spec, Status: c.Status}
}

func init() {
	SchemeBuilder.Register(&Cluster{}, &ClusterList{})
}
