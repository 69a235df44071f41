package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefaultFleet is the fleet name used when a provider config names none. It
// is the control plane's own default (controlplane --fleet).
const DefaultFleet = "flotilla"

// ProviderConfigSpec says how to reach the flotilla host apiserver: the
// apiserver that stores flotilla's Clusters, policies and templates and that
// `terraform-provider-flotilla controlplane` reconciles.
type ProviderConfigSpec struct {
	// Credentials of the host apiserver.
	Credentials ProviderCredentials `json:"credentials"`

	// Fleet is the fleet name the control plane stamps into member objects
	// (its --fleet flag). It must match for status.atProvider's rendered
	// hashes to equal the members' flotilla.io/rendered-hash annotations.
	// +optional
	// +kubebuilder:default=flotilla
	Fleet string `json:"fleet,omitempty"`
}

// ProviderCredentials are the host apiserver's credentials.
type ProviderCredentials struct {
	// Source of the credentials. Secret: a kubeconfig in the Secret that
	// secretRef names. InjectedIdentity: the host is the apiserver the
	// provider itself runs against (its own kubeconfig or in-cluster
	// identity).
	// +kubebuilder:validation:Enum=Secret;InjectedIdentity
	Source xpv2.CredentialsSource `json:"source"`

	// SecretRef names the key of a Secret that holds a kubeconfig of the host
	// apiserver; its current context is used. A namespaced ProviderConfig may
	// only name a Secret in its own namespace.
	// +optional
	SecretRef *xpv2.SecretKeySelector `json:"secretRef,omitempty"`
}

// ProviderConfigStatus is the observed state of a provider config.
type ProviderConfigStatus struct {
	xpv2.ProviderConfigStatus `json:",inline"`
}

// ProviderConfig configures how the provider reaches the flotilla host for
// managed resources in its own namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SECRET-NAME",type=string,JSONPath=`.spec.credentials.secretRef.name`,priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,flotilla}
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is how to reach the host.
	Spec ProviderConfigSpec `json:"spec"`
	// Status counts the managed resources that use this config.
	// +optional
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfig.
//
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the provider configs.
	Items []ProviderConfig `json:"items"`
}

// ClusterProviderConfig configures how the provider reaches the flotilla
// host for managed resources in any namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SECRET-NAME",type=string,JSONPath=`.spec.credentials.secretRef.name`,priority=1
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Cluster,categories={crossplane,provider,flotilla}
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is how to reach the host.
	Spec ProviderConfigSpec `json:"spec"`
	// Status counts the managed resources that use this config.
	// +optional
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ClusterProviderConfigList is a list of ClusterProviderConfig.
//
// +kubebuilder:object:root=true
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the provider configs.
	Items []ClusterProviderConfig `json:"items"`
}

// ProviderConfigUsage records that a managed resource uses a ProviderConfig
// or ClusterProviderConfig, so that the config is not deleted under it.
//
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name="CONFIG-NAME",type=string,JSONPath=`.providerConfigRef.name`
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type=string,JSONPath=`.resourceRef.kind`
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type=string,JSONPath=`.resourceRef.name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,provider,flotilla}
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// ProviderConfigUsageList is a list of ProviderConfigUsage.
//
// +kubebuilder:object:root=true
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the usages.
	Items []ProviderConfigUsage `json:"items"`
}

func init() {
	SchemeBuilder.Register(
		&ProviderConfig{}, &ProviderConfigList{},
		&ClusterProviderConfig{}, &ClusterProviderConfigList{},
		&ProviderConfigUsage{}, &ProviderConfigUsageList{},
	)
}
