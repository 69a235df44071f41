package api

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BindingRolloutPhase is where a binding's staged rollout stands.
type BindingRolloutPhase string

const (
	// BindingRolloutProgressing means the current batch's clusters are being
	// updated, or some are not healthy yet and the gate's timeout has not
	// run out.
	BindingRolloutProgressing BindingRolloutPhase = "Progressing"
	// BindingRolloutBaking means the current batch is healthy (within
	// maxUnhealthyClusters) and waits out the gate's bake time.
	BindingRolloutBaking BindingRolloutPhase = "Baking"
	// BindingRolloutHalted means a gate failed; later stages keep the previous
	// rendering until the template changes again or a resume is asked for.
	BindingRolloutHalted BindingRolloutPhase = "Halted"
	// BindingRolloutComplete means every stage passed its gate; every cluster has
	// the revision.
	BindingRolloutComplete BindingRolloutPhase = "Complete"
)

// Reasons of a rollout's status (BindingRolloutStatus.Reason).
const (
	// RolloutReasonUpdating means the batch's Works are being written.
	RolloutReasonUpdating = "Updating"
	// RolloutReasonWaitingForHealth means too many updated clusters are not healthy yet.
	RolloutReasonWaitingForHealth = "WaitingForHealth"
	// RolloutReasonBaking means the batch is healthy and the bake time runs.
	RolloutReasonBaking = "Baking"
	// RolloutReasonGateTimedOut means the gate's timeout ran out with too many
	// updated clusters not healthy.
	RolloutReasonGateTimedOut = "GateTimedOut"
	// RolloutReasonBakeFailed means updated clusters turned unhealthy during the
	// bake time.
	RolloutReasonBakeFailed = "BakeFailed"
	// RolloutReasonRolledBack means the gate failed and the batch's updated
	// clusters were given the last healthy rendering back.
	RolloutReasonRolledBack = "RolledBack"
	// RolloutReasonComplete means every stage passed.
	RolloutReasonComplete = "Complete"
)

// BindingRolloutStatus is where the staged rollout of the binding's
// template stands (status.rollout; a flotilla extension, absent unless the
// claiming policy has spec.rollout).
type BindingRolloutStatus struct {
	// Revision is the revision being rolled out: the template's
	// metadata.generation, followed by a hash of the override rules that
	// apply to it when there are any ("7", "7-1a2b3c4d").
	Revision string `json:"revision"`
	// Phase is Progressing, Baking, Halted or Complete.
	Phase BindingRolloutPhase `json:"phase"`
	// Stage is the name of the current stage; empty once complete.
	// +optional
	Stage string `json:"stage,omitempty"`
	// StageIndex is the current stage's index in spec.rollout.stages (the
	// implicit "remaining" stage last).
	// +optional
	StageIndex int32 `json:"stageIndex,omitempty"`
	// Batch is the current batch of the stage (maxConcurrentClusters).
	// +optional
	Batch int32 `json:"batch,omitempty"`
	// BatchStartTime is when the current batch started: the gate's timeout
	// counts from it.
	// +optional
	BatchStartTime *metav1.Time `json:"batchStartTime,omitempty"`
	// HealthySince is when the current batch's updated clusters became
	// healthy enough (at most maxUnhealthyClusters not healthy): the bake
	// time counts from it.
	// +optional
	HealthySince *metav1.Time `json:"healthySince,omitempty"`
	// Reason is a CamelCase reason for the phase (WaitingForHealth,
	// Baking, GateTimedOut, RolledBack, …).
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says why the rollout waits or halted: the stage, the clusters
	// and their health reasons.
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedResume is the value of the template's
	// rollout.flotilla.io/resume annotation when the rollout started or
	// last resumed; a different value resumes a halted rollout.
	// +optional
	ObservedResume string `json:"observedResume,omitempty"`
	// Stages are the rollout's stages in order, with their clusters and
	// when each started and passed.
	// +optional
	Stages []BindingRolloutStage `json:"stages,omitempty"`
	// Clusters says which revision each scheduled cluster runs.
	// +optional
	Clusters []BindingRolloutCluster `json:"clusters,omitempty"`
}

// BindingRolloutStage is one stage of a rollout as it went.
type BindingRolloutStage struct {
	// Name of the stage.
	Name string `json:"name"`
	// Clusters of the stage, in update order.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
	// StartTime is when the stage's first batch started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// HealthyTime is when the stage's last batch became healthy: its bake
	// time counted from then.
	// +optional
	HealthyTime *metav1.Time `json:"healthyTime,omitempty"`
	// PassTime is when the stage's gate passed.
	// +optional
	PassTime *metav1.Time `json:"passTime,omitempty"`
}

// BindingRolloutCluster is one scheduled cluster in a rollout.
type BindingRolloutCluster struct {
	// Name of the cluster.
	Name string `json:"name"`
	// Revision whose rendering the cluster's Work holds; empty when the
	// cluster has no Work yet (its stage has not started).
	// +optional
	Revision string `json:"revision,omitempty"`
	// Health of the template's object there, as last reported.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
	// Reason says why it is not healthy.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Digest is the SHA-256 of the manifests of the cluster's Work as the
	// binding controller wrote (or holds) them. The execution controller
	// applies a Work that is not the binding's current rendering (a held
	// stage, a rollback copy) only when its manifests have this digest or
	// StableDigest, so a Work edited in its execution namespace is not.
	// +optional
	Digest string `json:"digest,omitempty"`
	// StableDigest is the SHA-256 of the Work's stable copy (the
	// rendering a rollback gives back), as the binding controller took it.
	// +optional
	StableDigest string `json:"stableDigest,omitempty"`
}
