package api

import "time"

// RolloutStrategy stages a template change across the scheduled clusters: a
// canary stage first, a gate after it, then the next stage. It is a
// flotilla extension beside Karmada's fields (Karmada has no staged
// rollout); nil keeps Karmada's behaviour, where every cluster updates at
// once.
type RolloutStrategy struct {
	// Stages, in order; 1 to 10, names unique. Scheduled clusters no stage
	// selects form an implicit last stage named "remaining" with the
	// default gate.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Stages []RolloutStage `json:"stages"`
	// OnGateFailure is Halt (the default: later stages keep the previous
	// rendering) or Rollback (the stage's updated clusters go back to the
	// last healthy rendering, then the rollout halts).
	// +optional
	// +kubebuilder:validation:Enum=Halt;Rollback
	OnGateFailure RolloutFailureAction `json:"onGateFailure,omitempty"`
}

// RolloutStage is one wave of a staged rollout.
type RolloutStage struct {
	// Name identifies the stage in plans, status and errors: a DNS-1123
	// label, unique in the strategy.
	Name string `json:"name"`
	// ClusterAffinity selects the stage's clusters among the scheduled ones
	// (the same type as placement.clusterAffinity). A cluster belongs to
	// the first stage that selects it. nil selects "the rest" (every
	// scheduled cluster no earlier stage took); only the last stage may be
	// nil.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
	// MaxConcurrentClusters caps how many of the stage's clusters update at
	// once: the stage runs in batches of this size, in cluster-name order,
	// each batch gated like the stage. nil: all at once. At least 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrentClusters *int32 `json:"maxConcurrentClusters,omitempty"`
	// Gate must pass before the next batch or stage starts. nil: the
	// defaults of RolloutGate.
	// +optional
	Gate *RolloutGate `json:"gate,omitempty"`
}

// RolloutGate is the health check between two batches or stages.
type RolloutGate struct {
	// BakeSeconds every updated cluster must stay healthy before the gate
	// passes (default 0).
	// +optional
	// +kubebuilder:validation:Minimum=0
	BakeSeconds int32 `json:"bakeSeconds,omitempty"`
	// MaxUnhealthyClusters of the stage (or batch) that may be unhealthy
	// when the gate is judged (default 0).
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxUnhealthyClusters int32 `json:"maxUnhealthyClusters,omitempty"`
	// TimeoutSeconds the updated clusters have to become healthy before the
	// gate fails (default 600, at least 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// RolloutFailureAction is what happens when a gate fails.
type RolloutFailureAction string

const (
	// RolloutHalt stops the rollout: the stages after the failed one keep
	// the previous rendering. The default.
	RolloutHalt RolloutFailureAction = "Halt"
	// RolloutRollback puts the failed stage's updated clusters back on the
	// last healthy rendering, then stops the rollout.
	RolloutRollback RolloutFailureAction = "Rollback"
)

// Rollout defaults and bounds.
const (
	// RemainingStageName names the implicit last stage that takes the
	// scheduled clusters no stage selects.
	RemainingStageName = "remaining"
	// DefaultGateTimeoutSeconds is RolloutGate.TimeoutSeconds when unset.
	DefaultGateTimeoutSeconds int32 = 600
	// MaxRolloutStages is the most stages a strategy may list.
	MaxRolloutStages = 10
)

// FailureAction is the strategy's OnGateFailure with its default (Halt).
func (s *RolloutStrategy) FailureAction() RolloutFailureAction {
	if s == nil || s.OnGateFailure == "" {
		return RolloutHalt
	}
	return s.OnGateFailure
}

// Bake is how long the updated clusters must stay healthy; 0 for a nil gate.
func (g *RolloutGate) Bake() time.Duration {
	if g == nil {
		return 0
	}
	return time.Duration(g.BakeSeconds) * time.Second
}

// Timeout is how long the updated clusters have to become healthy:
// TimeoutSeconds, or DefaultGateTimeoutSeconds for a nil gate or when unset.
func (g *RolloutGate) Timeout() time.Duration {
	if g == nil || g.TimeoutSeconds == nil {
		return time.Duration(DefaultGateTimeoutSeconds) * time.Second
	}
	return time.Duration(*g.TimeoutSeconds) * time.Second
}

// MaxUnhealthy is how many clusters may be unhealthy when the gate is
// judged; 0 for a nil gate.
func (g *RolloutGate) MaxUnhealthy() int {
	if g == nil {
		return 0
	}
	return int(g.MaxUnhealthyClusters)
}
