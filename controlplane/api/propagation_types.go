package api

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy says which clusters receive the templates it selects in
// its own namespace. It mirrors Karmada's policy.karmada.io/v1alpha1 kind.
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule.
	Spec PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicy is the cluster-wide form of PropagationPolicy: it
// may select cluster-scoped templates and templates in any namespace.
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule.
	Spec PropagationSpec `json:"spec"`
}

// PropagationSpec is the body shared by both propagation policy kinds.
type PropagationSpec struct {
	// ResourceSelectors pick the templates this policy propagates. Empty is
	// invalid: it never means "everything", so a Secret is never propagated
	// by accident.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Association is Karmada's deprecated field, which none of its
	// controllers reads; true is refused (AssociationRefusal), false is
	// accepted as the default kubectl prints back.
	// Deprecated: use PropagateDeps.
	// +optional
	Association bool `json:"association,omitempty"`

	// PropagateDeps makes dependents (ConfigMaps, Secrets, ServiceAccounts,
	// PVCs referenced by a workload) follow the workload's placement.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// Placement says where selected templates go.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// Priority decides between policies that select the same template;
	// higher wins, nil means 0.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// Preemption is Always or Never (the default).
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// DependentOverrides names override policies that must exist before
	// this policy takes effect.
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// SchedulerName is the scheduler that handles the templates; defaults
	// to default-scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover configures migration on application or cluster failure; nil
	// disables it.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution is Abort (the default) or Overwrite, for when the
	// object already exists in a member.
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// ActivationPreference is empty (react to policy changes at once) or Lazy.
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// Suspension pauses dispatching to all or some clusters.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps member objects when the template is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority sets where the workload's scheduling priority comes from.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// Rollout stages a template change across the scheduled clusters: a
	// flotilla extension, off when nil (every cluster updates at once, as
	// in Karmada).
	// +optional
	Rollout *RolloutStrategy `json:"rollout,omitempty"`
}

// ResourceSelector picks templates by apiVersion and kind, and optionally by
// namespace and then by name or labels.
type ResourceSelector struct {
	// APIVersion of the templates.
	APIVersion string `json:"apiVersion"`
	// Kind of the templates.
	Kind string `json:"kind"`
	// Namespace of the templates; empty inherits the policy's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the template; empty selects all. When set, LabelSelector is ignored.
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector over the templates' labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldSelector selects clusters by provider, region or zone.
type FieldSelector struct {
	// MatchExpressions are ANDed; keys are provider, region or zone.
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Keys a FieldSelector may use.
const (
	// ProviderField selects on ClusterSpec.Provider.
	ProviderField = "provider"
	// RegionField selects on ClusterSpec.Region.
	RegionField = "region"
	// ZoneField selects on ClusterSpec.Zone and ClusterSpec.Zones.
	ZoneField = "zone"
)

// Suspension pauses parts of propagation.
type Suspension struct {
	// Dispatching, when true, stops dispatching to every cluster.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`
	// DispatchingOnClusters stops dispatching to the named clusters only.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names the clusters dispatching is paused on.
type SuspendClusters struct {
	// ClusterNames of the paused clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// PurgeMode says what happens to the copy left behind on the cluster a
// workload fails over from.
type PurgeMode string

const (
	// PurgeModeDirectly evicts the old copy at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully evicts the old copy once the new one is healthy or
	// a timeout passes.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever leaves the old copy for the user to clean up.
	PurgeModeNever PurgeMode = "Never"
	// PurgeModeImmediately is the deprecated spelling of Directly.
	PurgeModeImmediately PurgeMode = "Immediately"
	// PurgeModeGraciously is the deprecated spelling of Gracefully.
	PurgeModeGraciously PurgeMode = "Graciously"
)

// FailoverBehavior configures failover on application or cluster failure.
type FailoverBehavior struct {
	// Application configures failover when the application is unhealthy.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`
	// Cluster configures failover when the cluster fails.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior configures failover on application failure.
type ApplicationFailoverBehavior struct {
	// DecisionConditions must all hold before failover starts.
	DecisionConditions DecisionConditions `json:"decisionConditions"`
	// PurgeMode for the old copy; defaults to Gracefully.
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// GracePeriodSeconds bounds the wait in Gracefully mode; must be positive.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// StatePreservation carries state from the old copy to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// ClusterFailoverBehavior configures failover on cluster failure.
type ClusterFailoverBehavior struct {
	// PurgeMode for the old copy; defaults to Gracefully.
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// StatePreservation carries state from the old copy to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions gate the failover decision.
type DecisionConditions struct {
	// TolerationSeconds to wait after the application turns unhealthy.
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// StatePreservation lists what state to carry over on failover.
type StatePreservation struct {
	// Rules, each a JSONPath and the label it is carried in.
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule carries one JSONPath value under a label key.
type StatePreservationRule struct {
	// AliasLabelName is the label key the value is carried in.
	AliasLabelName string `json:"aliasLabelName"`
	// JSONPath into the old copy's status.
	JSONPath string `json:"jsonPath"`
}
