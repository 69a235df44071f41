package apitest

import (
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// RolloutWrapper builds a RolloutStrategy:
// MakeRollout().Stage("canary", MakeAffinity().Names("east").Obj()).Gate(30, 0, 120).Stage("rest", nil).Obj().
// Batch and Gate apply to the stage added last.
type RolloutWrapper struct {
	r api.RolloutStrategy
}

// MakeRollout starts a strategy with no stages (invalid until one is added).
func MakeRollout() *RolloutWrapper { return &RolloutWrapper{} }

// Stage appends a stage; a nil affinity takes the rest.
func (w *RolloutWrapper) Stage(name string, affinity *api.ClusterAffinity) *RolloutWrapper {
	w.r.Stages = append(w.r.Stages, api.RolloutStage{Name: name, ClusterAffinity: affinity})
	return w
}

// Batch sets maxConcurrentClusters of the last stage.
func (w *RolloutWrapper) Batch(n int32) *RolloutWrapper {
	w.last().MaxConcurrentClusters = &n
	return w
}

// Gate sets the gate of the last stage; timeout 0 leaves timeoutSeconds unset.
func (w *RolloutWrapper) Gate(bakeSeconds, maxUnhealthy, timeoutSeconds int32) *RolloutWrapper {
	g := &api.RolloutGate{BakeSeconds: bakeSeconds, MaxUnhealthyClusters: maxUnhealthy}
	if timeoutSeconds != 0 {
		g.TimeoutSeconds = &timeoutSeconds
	}
	w.last().Gate = g
	return w
}

// OnGateFailure sets what a failed gate does.
func (w *RolloutWrapper) OnGateFailure(a api.RolloutFailureAction) *RolloutWrapper {
	w.r.OnGateFailure = a
	return w
}

func (w *RolloutWrapper) last() *api.RolloutStage {
	if len(w.r.Stages) == 0 {
		w.r.Stages = append(w.r.Stages, api.RolloutStage{})
	}
	return &w.r.Stages[len(w.r.Stages)-1]
}

// Obj returns a copy of the built strategy.
func (w *RolloutWrapper) Obj() *api.RolloutStrategy { return w.r.DeepCopy() }

// Rollout sets the policy's staged rollout.
func (w *PropagationPolicyWrapper) Rollout(r *api.RolloutStrategy) *PropagationPolicyWrapper {
	w.spec.Rollout = r
	return w
}
