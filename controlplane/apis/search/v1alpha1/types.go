package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// ConditionSynced is the condition that says whether every selected kind
// of every selected cluster is being cached, and names the first that is
// not.
const ConditionSynced = "Synced"

// ResourceRegistry selects member clusters and kinds whose objects the
// control plane caches and serves, across clusters, through its
// aggregated API. It is cluster-scoped: it says what is cached, not who
// may read it (the host's RBAC decides that, per namespace).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=rr,categories=flotilla
// +kubebuilder:printcolumn:name="Synced",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceRegistry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec selects the clusters and kinds.
	Spec ResourceRegistrySpec `json:"spec"`

	// Status is what the control plane made of the selection.
	// +optional
	Status ResourceRegistryStatus `json:"status,omitempty"`
}

// ResourceRegistrySpec selects the clusters and kinds to cache.
type ResourceRegistrySpec struct {
	// TargetCluster selects the member clusters, as a propagation
	// policy's clusterAffinity does (names, label selector, field
	// selector, exclusions); empty selects every cluster. Pull-mode
	// members are never cached: the control plane has no connection to
	// them.
	// +optional
	TargetCluster api.ClusterAffinity `json:"targetCluster,omitempty"`

	// ResourceSelectors name the kinds to cache.
	// +kubebuilder:validation:MinItems=1
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
}

// ResourceSelector names one kind.
type ResourceSelector struct {
	// APIVersion is the kind's group/version, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// Kind is the kind, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
}

// ResourceRegistryStatus is the registry's observed state.
type ResourceRegistryStatus struct {
	// Conditions: Synced.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ResourceRegistryList is a list of ResourceRegistry.
//
// +kubebuilder:object:root=true
type ResourceRegistryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the registries.
	Items []ResourceRegistry `json:"items"`
}

// GroupVersionKinds returns the selected kinds, or what is wrong with a
// selector, by its field path.
func (r *ResourceRegistry) GroupVersionKinds() ([]schema.GroupVersionKind, field.ErrorList) {
	var errs field.ErrorList
	out := make([]schema.GroupVersionKind, 0, len(r.Spec.ResourceSelectors))
	for i, s := range r.Spec.ResourceSelectors {
		p := field.NewPath("spec", "resourceSelectors").Index(i)
		gv, err := schema.ParseGroupVersion(s.APIVersion)
		switch {
		case err != nil || gv.Version == "":
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion, "want group/version, or v1 for the core group"))
		case s.Kind == "":
			errs = append(errs, field.Required(p.Child("kind"), "a kind to cache"))
		default:
			out = append(out, gv.WithKind(s.Kind))
		}
	}
	errs = append(errs, api.ValidateClusterAffinity(&r.Spec.TargetCluster, field.NewPath("spec", "targetCluster"))...)
	return out, errs
}

func init() {
	SchemeBuilder.Register(&ResourceRegistry{}, &ResourceRegistryList{})
}
