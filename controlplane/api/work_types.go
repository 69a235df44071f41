package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ResourceBinding ties one template to its scheduling result. It mirrors
// Karmada's work.karmada.io/v1alpha2 ResourceBinding; the CLI reads it as the
// previous result so scheduling stays sticky.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template reference, its requirements and the result.
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the scheduler's and the members' report.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec is a template reference plus where it goes.
type ResourceBindingSpec struct {
	// Resource is the template.
	Resource ObjectReference `json:"resource"`
	// PropagateDeps copies the claiming policy's PropagateDeps.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`
	// ReplicaRequirements are what one replica needs.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`
	// Replicas is the template's desired replica count.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Components are the pod templates of a multi-component workload
	// (a FlinkDeployment's JobManager and TaskManagers), from its
	// customization's componentResource script. A binding with components
	// has no Replicas or ReplicaRequirements: the template is scheduled as
	// a whole, never divided, as in Karmada with MultiplePodTemplatesScheduling.
	// +optional
	Components []Component `json:"components,omitempty"`
	// Clusters is the scheduling result.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
	// Placement is a copy of the claiming policy's placement.
	// +optional
	Placement *Placement `json:"placement,omitempty"`
	// GracefulEvictionTasks are evictions still waiting for their replacement.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
	// RequiredBy lists the bindings this one is a dependency of.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`
	// SchedulerName copies the claiming policy's scheduler name.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// Failover copies the claiming policy's failover behaviour.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`
	// ConflictResolution copies the claiming policy's conflict resolution.
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`
	// RescheduleTriggeredAt asks for a fresh schedule when newer than the last one.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`
	// Suspension pauses scheduling or dispatching.
	// +optional
	Suspension *BindingSuspension `json:"suspension,omitempty"`
	// PreserveResourcesOnDeletion copies the claiming policy's setting.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
	// SchedulePriority is the resolved scheduling priority.
	// +optional
	SchedulePriority *BindingSchedulePriority `json:"schedulePriority,omitempty"`
}

// ObjectReference identifies a template.
type ObjectReference struct {
	// APIVersion of the template.
	APIVersion string `json:"apiVersion"`
	// Kind of the template.
	Kind string `json:"kind"`
	// Namespace of the template; empty for cluster-scoped kinds.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the template.
	Name string `json:"name"`
	// UID of the template.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// ResourceVersion of the template.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements are what one replica of a workload needs.
type ReplicaRequirements struct {
	// NodeClaim is the node constraints of the replica's pod.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// ResourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// Namespace of the workload, for quota checks.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// PriorityClassName of the replica's pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// Component is one pod template of a multi-component workload, as
// Karmada's work.karmada.io/v1alpha2 Component.
type Component struct {
	// Name of the component, unique within the workload.
	Name string `json:"name"`
	// Replicas is the component's replica count.
	Replicas int32 `json:"replicas"`
	// ReplicaRequirements are what one replica of the component needs.
	// Karmada's ComponentReplicaRequirements has the same fields less the
	// namespace, which is the workload's.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// NodeClaim is the node constraints of a replica's pod.
type NodeClaim struct {
	// HardNodeAffinity is the pod's required node affinity.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	// NodeSelector is the pod's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations are the pod's tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// TargetCluster is one cluster of a scheduling result.
type TargetCluster struct {
	// Name of the cluster.
	Name string `json:"name"`
	// Replicas assigned to it.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// GracefulEvictionTask is an eviction from one cluster that waits for the
// replacement to become healthy.
type GracefulEvictionTask struct {
	// FromCluster is the cluster being evicted from.
	FromCluster string `json:"fromCluster"`
	// PurgeMode for the old copy.
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// Replicas that were on the evicted cluster.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Reason is a CamelCase reason.
	Reason string `json:"reason"`
	// Message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
	// Producer is the controller that created the task.
	Producer string `json:"producer"`
	// GracePeriodSeconds bounds the wait for the replacement.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// SuppressDeletion holds the eviction until set to false.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`
	// PreservedLabelState is state carried to the new cluster.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`
	// ClustersBeforeFailover is the placement before the failover.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`
	// CreationTimestamp is when the task was created.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is a binding this one is a dependency of.
type BindingSnapshot struct {
	// Namespace of the binding.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the binding.
	Name string `json:"name"`
	// Clusters the binding is scheduled to.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// BindingSuspension is the binding form of Suspension, with scheduling added.
type BindingSuspension struct {
	// Suspension is copied from the claiming policy.
	Suspension `json:",inline"`
	// Scheduling, when true, pauses scheduling.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// BindingSchedulePriority is the resolved scheduling priority of a binding.
type BindingSchedulePriority struct {
	// Priority is the resolved priority value.
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// ResourceBindingStatus is the scheduler's and the members' report.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the generation the scheduler last saw.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`
	// SchedulerObservedAffinityName is the ClusterAffinities term last used.
	// +optional
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`
	// LastScheduledTime is when the binding was last scheduled.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`
	// Conditions of the binding.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AggregatedStatus is the status reported by each member.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
	// Rollout is where the staged rollout of the template stands, when the
	// claiming policy has one (a flotilla extension).
	// +optional
	Rollout *BindingRolloutStatus `json:"rollout,omitempty"`
}

// ResourceHealth is the health a member reports for an object.
type ResourceHealth string

const (
	// ResourceHealthy means the object is healthy.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy means the object is not healthy.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown means health could not be told.
	ResourceUnknown ResourceHealth = "Unknown"
)

// AggregatedStatusItem is one member's report on the template.
type AggregatedStatusItem struct {
	// ClusterName of the member.
	ClusterName string `json:"clusterName"`
	// Status is the object's status in the member.
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Applied says whether the object was applied.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// AppliedMessage explains a failed apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`
	// Health of the object in the member.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// Work is the rendered manifests for one member cluster. It mirrors
// Karmada's work.karmada.io/v1alpha1 Work.
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the manifests.
	Spec WorkSpec `json:"spec"`

	// Status is the member's report on the manifests.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec holds the manifests for one member.
type WorkSpec struct {
	// Workload is the manifests.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`
	// SuspendDispatching, when true, stops dispatching to the member.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`
	// PreserveResourcesOnDeletion keeps member objects when the work is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate is the list of manifests of a Work.
type WorkloadTemplate struct {
	// Manifests to apply in the member.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one rendered object.
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is the member's report on a Work.
type WorkStatus struct {
	// Conditions of the work, Applied among them.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ManifestStatuses is the status of each manifest.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ManifestStatus is the status of one manifest in the member.
type ManifestStatus struct {
	// Identifier locates the manifest.
	Identifier ResourceIdentifier `json:"identifier"`
	// Status is the object's status in the member.
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Health of the object in the member.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
	// HealthMessage explains Health ("1/3 replicas updated"): a flotilla
	// extension, so that a rollout's gate can say why a cluster holds it.
	// +optional
	HealthMessage string `json:"healthMessage,omitempty"`
}

// ResourceIdentifier locates one manifest of a Work.
type ResourceIdentifier struct {
	// Ordinal is the manifest's index in the Work.
	Ordinal int `json:"ordinal"`
	// Group of the object.
	Group string `json:"group"`
	// Version of the object.
	Version string `json:"version"`
	// Kind of the object.
	Kind string `json:"kind"`
	// Resource is the plural resource name.
	Resource string `json:"resource"`
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the object.
	Name string `json:"name"`
}
