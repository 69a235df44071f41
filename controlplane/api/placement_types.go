package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement says which clusters may receive a template and how its
// replicas are spread over them.
type Placement struct {
	// ClusterAffinity restricts the candidate clusters. It cannot be set
	// together with ClusterAffinities; if neither is set every cluster is a
	// candidate.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities are ordered cluster groups; the scheduler takes the
	// first group that can hold the template.
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// ClusterTolerations let the template land on tainted clusters.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints bound how many cluster groups are chosen.
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling says how replicas are assigned; nil means Duplicated.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity is Karmada's inter-workload affinity and
	// anti-affinity. It is decoded so that it can be refused by name
	// (WorkloadAffinityRefusal), never silently dropped: flotilla's
	// scheduler places each template on its own and keeps no index of the
	// other workloads' placements.
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="workloadAffinity is not supported: flotilla schedules each template on its own, without an index of the other workloads' placements; remove it"
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// WorkloadAffinity is Karmada's inter-workload affinity (co-locate the
// workloads that share a label value) and anti-affinity (separate them).
type WorkloadAffinity struct {
	// Affinity co-locates workloads of the same affinity group.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`
	// AntiAffinity separates workloads of the same anti-affinity group.
	// +optional
	AntiAffinity *WorkloadAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm names the template label whose value forms the group.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is the label key on the resource template.
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// SpreadFieldValue is a cluster field clusters can be grouped by.
type SpreadFieldValue string

// Fields clusters can be grouped by.
const (
	// SpreadByFieldCluster makes every cluster its own group.
	SpreadByFieldCluster SpreadFieldValue = "cluster"
	// SpreadByFieldRegion groups clusters by region.
	SpreadByFieldRegion SpreadFieldValue = "region"
	// SpreadByFieldZone groups clusters by zone.
	SpreadByFieldZone SpreadFieldValue = "zone"
	// SpreadByFieldProvider groups clusters by provider.
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint bounds the number of cluster groups chosen.
type SpreadConstraint struct {
	// SpreadByField groups clusters by a cluster field. Exclusive with
	// SpreadByLabel; defaults to cluster when both are empty.
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`
	// SpreadByLabel groups clusters by a label key.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	// MaxGroups is the most groups to choose; 0 means no limit.
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`
	// MinGroups is the fewest groups to choose; defaults to 1.
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// ClusterAffinity selects clusters: the excluded ones never match, the rest
// must match the label selector, the field selector and the name list (each
// when set).
type ClusterAffinity struct {
	// LabelSelector over cluster labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// FieldSelector over provider, region and zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`
	// ClusterNames the cluster must be one of.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
	// ExcludeClusters never match.
	// +optional
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is one named cluster group in Placement.ClusterAffinities.
type ClusterAffinityTerm struct {
	// AffinityName names the group; 1 to 32 characters, unique in the policy.
	AffinityName string `json:"affinityName"`

	// ClusterAffinity is the primary group.
	ClusterAffinity `json:",inline"`

	// OverflowAffinities are further groups, in order, that replicas spill
	// into when the primary group runs out of room; scale-down drains them in
	// reverse order. This mirrors Karmada v1.18's OverflowClusterAffinity
	// (karmada#7386, #7423): it is only valid with Divided scheduling by
	// dynamic weight or Aggregated, needs a non-empty primary affinity, and
	// names must be unique within the term and differ from AffinityName. A
	// cluster in several groups belongs to the first one that lists it.
	// Non-workloads (no replicas) use only the primary group.
	// +optional
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinity is one overflow group of a ClusterAffinityTerm.
type OverflowClusterAffinity struct {
	// AffinityName names the overflow group.
	AffinityName string `json:"affinityName"`

	// ClusterAffinity selects the group's clusters.
	ClusterAffinity `json:",inline"`
}

// ReplicaSchedulingType is how replicas go to clusters.
type ReplicaSchedulingType string

const (
	// ReplicaSchedulingTypeDuplicated gives every cluster all replicas.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided splits replicas across clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference is how Divided replicas are split.
type ReplicaDivisionPreference string

const (
	// ReplicaDivisionPreferenceAggregated packs replicas into as few clusters as fit.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	// ReplicaDivisionPreferenceWeighted splits replicas by weight.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy says how replicas are assigned to clusters.
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated or Divided.
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`
	// ReplicaDivisionPreference is Aggregated or Weighted, for Divided.
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`
	// WeightPreference gives the weights for Weighted; nil weighs all clusters equally.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ClusterPreferences are either static weights or a dynamic weight factor.
type ClusterPreferences struct {
	// StaticWeightList weighs clusters selected by affinity.
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	// DynamicWeight derives weights from a live factor.
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight weighs the clusters TargetCluster selects.
type StaticClusterWeight struct {
	// TargetCluster selects the weighted clusters.
	TargetCluster ClusterAffinity `json:"targetCluster"`
	// Weight is at least 1.
	Weight int64 `json:"weight"`
}

// DynamicWeightFactor is what dynamic weights are derived from.
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weighs each cluster by how many more
// replicas it can hold.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// PreemptionBehavior says whether a policy may take templates claimed by a
// lower-priority policy.
type PreemptionBehavior string

const (
	// PreemptAlways allows preemption.
	PreemptAlways PreemptionBehavior = "Always"
	// PreemptNever forbids preemption.
	PreemptNever PreemptionBehavior = "Never"
)

// ConflictResolution is what happens when the object already exists in a member.
type ConflictResolution string

const (
	// ConflictOverwrite takes the existing object over.
	ConflictOverwrite ConflictResolution = "Overwrite"
	// ConflictAbort refuses to touch the existing object.
	ConflictAbort ConflictResolution = "Abort"
)

// ActivationPreference is when policy changes reach the templates.
type ActivationPreference string

// LazyActivation defers policy changes until the template itself changes.
const LazyActivation ActivationPreference = "Lazy"

// SchedulePriority says where a workload's scheduling priority comes from.
type SchedulePriority struct {
	// PriorityClassSource is where to look up the priority class.
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`
	// PriorityClassName is the priority class to use.
	PriorityClassName string `json:"priorityClassName"`
}

// PriorityClassSource is where a priority class is looked up.
type PriorityClassSource string

const (
	// FederatedPriorityClass uses Karmada's FederatedPriorityClass (not implemented by Karmada).
	FederatedPriorityClass PriorityClassSource = "FederatedPriorityClass"
	// KubePriorityClass uses scheduling.k8s.io/v1 PriorityClass.
	KubePriorityClass PriorityClassSource = "KubePriorityClass"
	// PodPriorityClass uses the pod template's priorityClassName (not implemented by Karmada).
	PodPriorityClass PriorityClassSource = "PodPriorityClass"
)
