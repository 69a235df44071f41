package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Karmada's networking API: MultiClusterService
// (networking.karmada.io/v1alpha1). flotilla serves the same shape under
// networking.flotilla.io, and only when multi-cluster services are on.
const (
	// NetworkingGroup is Karmada's API group of MultiClusterService.
	NetworkingGroup = "networking.karmada.io"
	// FlotillaNetworkingGroup is flotilla's API group of the same kind.
	FlotillaNetworkingGroup = "networking.flotilla.io"
	// KindMultiClusterService is the kind of MultiClusterService.
	KindMultiClusterService = "MultiClusterService"
)

// ExposureType is how a MultiClusterService exposes its Service.
type ExposureType string

const (
	// ExposureTypeCrossCluster gives the consumer clusters the provider
	// clusters' endpoints of the Service, under the Service's own name.
	ExposureTypeCrossCluster ExposureType = "CrossCluster"
	// ExposureTypeLoadBalancer is Karmada's cloud load balancer exposure,
	// which flotilla refuses by name: it needs a cloud controller flotilla
	// does not run.
	ExposureTypeLoadBalancer ExposureType = "LoadBalancer"
)

// MultiClusterService says that the Service of its own name and namespace
// is served across clusters: the endpoints of the provider clusters reach
// the consumer clusters. Karmada's spec, without the deprecated range and
// serviceProvisionClusters/serviceConsumptionClusters fields and without
// ports (which only LoadBalancer uses).
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the exposure.
	Spec MultiClusterServiceSpec `json:"spec"`

	// Status is what the control plane last made of the exposure.
	// +optional
	Status MultiClusterServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceStatus is a MultiClusterService's observed state.
// Karmada's is a Service status; flotilla keeps only its conditions, the
// part Karmada writes.
type MultiClusterServiceStatus struct {
	// Conditions say which clusters provide and consume the Service and
	// why each listed cluster left out is (ServiceApplied).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MultiClusterServiceSpec is a MultiClusterService's exposure.
type MultiClusterServiceSpec struct {
	// Types are the exposure types; flotilla serves CrossCluster only.
	// +kubebuilder:validation:MinItems=1
	Types []ExposureType `json:"types"`
	// ProviderClusters are the clusters whose endpoints are exported;
	// empty means every cluster the Service is propagated to.
	// +optional
	ProviderClusters []ClusterSelector `json:"providerClusters,omitempty"`
	// ConsumerClusters are the clusters that get the providers'
	// endpoints; empty means every cluster the Service is propagated to.
	// +optional
	ConsumerClusters []ClusterSelector `json:"consumerClusters,omitempty"`
}

// ClusterSelector names one member cluster.
type ClusterSelector struct {
	// Name is the cluster's name.
	Name string `json:"name"`
}

// ClusterSelectorNames returns the names of sel, in order.
func ClusterSelectorNames(sel []ClusterSelector) []string {
	out := make([]string, 0, len(sel))
	for _, s := range sel {
		out = append(out, s.Name)
	}
	return out
}
