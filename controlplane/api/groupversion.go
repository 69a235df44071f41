package api

import "k8s.io/apimachinery/pkg/runtime/schema"

// API groups flotilla recognises as Karmada's own.
const (
	// ClusterGroup is the API group of Cluster.
	ClusterGroup = "cluster.karmada.io"
	// PolicyGroup is the API group of the propagation and override policies.
	PolicyGroup = "policy.karmada.io"
	// WorkGroup is the API group of ResourceBinding and Work.
	WorkGroup = "work.karmada.io"
)

// Group versions of the Karmada kinds flotilla models.
var (
	// ClusterGroupVersion is cluster.karmada.io/v1alpha1.
	ClusterGroupVersion = schema.GroupVersion{Group: ClusterGroup, Version: "v1alpha1"}
	// PolicyGroupVersion is policy.karmada.io/v1alpha1.
	PolicyGroupVersion = schema.GroupVersion{Group: PolicyGroup, Version: "v1alpha1"}
	// WorkGroupVersion is work.karmada.io/v1alpha1, the version of Work.
	WorkGroupVersion = schema.GroupVersion{Group: WorkGroup, Version: "v1alpha1"}
	// BindingGroupVersion is work.karmada.io/v1alpha2, the version of ResourceBinding.
	BindingGroupVersion = schema.GroupVersion{Group: WorkGroup, Version: "v1alpha2"}
)

// Kind names of the Karmada objects flotilla models.
const (
	// KindCluster is the kind of a member cluster.
	KindCluster = "Cluster"
	// KindPropagationPolicy is the kind of a namespaced propagation policy.
	KindPropagationPolicy = "PropagationPolicy"
	// KindClusterPropagationPolicy is the kind of a cluster-wide propagation policy.
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
	// KindOverridePolicy is the kind of a namespaced override policy.
	KindOverridePolicy = "OverridePolicy"
	// KindClusterOverridePolicy is the kind of a cluster-wide override policy.
	KindClusterOverridePolicy = "ClusterOverridePolicy"
	// KindResourceBinding is the kind of a namespaced binding.
	KindResourceBinding = "ResourceBinding"
	// KindWork is the kind of a rendered per-cluster work.
	KindWork = "Work"
)

// Defaults Karmada's webhooks and CRD schemas fill in.
const (
	// DefaultSchedulerName is the scheduler a policy names when it names none.
	DefaultSchedulerName = "default-scheduler"
)
