package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ManifestParameters hold the resource template.
type ManifestParameters struct {
	// Manifest is one Kubernetes object, the resource template. It is
	// server-side applied to the host in this resource's namespace
	// (metadata.namespace defaults to it and may not name another), where the
	// control plane's policies claim it, as in Karmada. Only kinds that are
	// namespaced in the host are accepted, and never those of flotilla's,
	// Karmada's or Crossplane's API groups, RBAC kinds or
	// service-account-token Secrets: the provider applies with its own
	// identity, not its author's.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Manifest runtime.RawExtension `json:"manifest"`

	// Adopt lets this Manifest take over a template that already exists in
	// the host and that no managed resource owns. Without it such a
	// template is left untouched and the Manifest reports Synced=False.
	// Once adopted, the template is this Manifest's: deleting the Manifest
	// deletes it, unless deletionPolicy is Orphan. A template owned by
	// another managed resource is never taken over.
	// +optional
	Adopt bool `json:"adopt,omitempty"`
}

// ManifestClusterObservation is the template in one member cluster.
type ManifestClusterObservation struct {
	// Name of the member cluster.
	Name string `json:"name"`
	// Replicas the cluster received (0 for kinds without replicas).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// RenderedHash is the flotilla.io/rendered-hash of the object this
	// cluster receives: the same for the same replicas and overrides.
	// +optional
	RenderedHash string `json:"renderedHash,omitempty"`
	// Applied says whether the control plane applied the object there.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// Health of the object there: Healthy, Unhealthy or Unknown.
	// +optional
	Health string `json:"health,omitempty"`
	// Message explains a failed apply.
	// +optional
	Message string `json:"message,omitempty"`
	// Suspended is true when the claiming policy's suspension holds
	// dispatch to this cluster back: it is scheduled and rendered, and
	// nothing is applied there until the suspension is lifted.
	// +optional
	Suspended bool `json:"suspended,omitempty"`
}

// ManifestObservation is where the template goes and how it is doing.
type ManifestObservation struct {
	// Preview is true when the placement below was computed by this
	// provider with the engine (managementPolicies [Observe] and the
	// template not in the host) instead of read from the control plane's
	// ResourceBinding. Nothing was written anywhere.
	// +optional
	Preview bool `json:"preview,omitempty"`
	// Policy is the PropagationPolicy (or ClusterPropagationPolicy) that
	// claims the template, as "<kind>/<name>".
	// +optional
	Policy string `json:"policy,omitempty"`
	// AffinityTerm is the clusterAffinities term in use, if the policy has terms.
	// +optional
	AffinityTerm string `json:"affinityTerm,omitempty"`
	// Placement is cluster → replicas.
	// +optional
	Placement map[string]int32 `json:"placement,omitempty"`
	// Clusters holds per-cluster details of the placement.
	// +optional
	// +listType=map
	// +listMapKey=name
	Clusters []ManifestClusterObservation `json:"clusters,omitempty"`
	// Health is Healthy when every placed cluster reports Healthy,
	// Unhealthy when one reports Unhealthy, otherwise Unknown.
	// +optional
	Health string `json:"health,omitempty"`
	// Status is the template's aggregated .status (Deployments: replica counts summed over clusters).
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Reasons says, per cluster, why it was not chosen (preview only).
	// +optional
	Reasons map[string]string `json:"reasons,omitempty"`
	// Message explains an empty placement: no policy claims the template,
	// or it cannot be scheduled.
	// +optional
	Message string `json:"message,omitempty"`
}

// ManifestSpec is the desired state of a Manifest.
type ManifestSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`
	// ForProvider holds the resource template.
	ForProvider ManifestParameters `json:"forProvider"`
}

// ManifestStatus is the observed state of a Manifest.
type ManifestStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`
	// AtProvider is where the template goes and how it is doing.
	// +optional
	AtProvider ManifestObservation `json:"atProvider,omitempty"`
}

// Manifest is a resource template in the flotilla host. The control plane's
// propagation policies claim it and roll it out to member clusters; it is
// Ready when every cluster it is placed on reports it Healthy.
// managementPolicies [Observe] previews the placement without writing.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=='Ready')].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=='Synced')].status`
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.spec.forProvider.manifest.kind`
// +kubebuilder:printcolumn:name="POLICY",type=string,JSONPath=`.status.atProvider.policy`
// +kubebuilder:printcolumn:name="HEALTH",type=string,JSONPath=`.status.atProvider.health`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:resource:scope=Namespaced,categories={crossplane,managed,flotilla}
type Manifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec ManifestSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status ManifestStatus `json:"status,omitempty"`
}

// ManifestList is a list of Manifest.
//
// +kubebuilder:object:root=true
type ManifestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the manifests.
	Items []Manifest `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Manifest{}, &ManifestList{})
}
