package autoscale

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// Recommendation is a desired replica count computed at At, kept by the
// caller for the stabilization windows.
type Recommendation struct {
	Replicas int32
	At       time.Time
}

// ScaleEvent is a change of the replicas the autoscaler made at At: the
// number of replicas added (in ScaleUps) or removed (in ScaleDowns).
type ScaleEvent struct {
	Change int32
	At     time.Time
}

// Input is what Normalize bounds.
type Input struct {
	// Current and Desired are the replicas now and as the metrics ask.
	Current, Desired int32
	// Min and Max are the autoscaler's bounds.
	Min, Max int32
	// Behavior is the autoscaler's; nil takes Kubernetes' defaults.
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
	// Recommendations are the past desired counts, ScaleUps and
	// ScaleDowns the past changes.
	Recommendations      []Recommendation
	ScaleUps, ScaleDowns []ScaleEvent
	// Now is the time of the decision.
	Now time.Time
}

// Output is the bounded decision and why.
type Output struct {
	// Replicas is what the template gets.
	Replicas int32
	// Stabilized is the desired count after the stabilization windows,
	// before the policies and bounds.
	Stabilized int32
	// Limited is true when a policy or a bound changed Stabilized, and
	// Reason says which (Kubernetes' ScalingLimited reasons).
	Limited bool
	Reason  string
}

// DefaultBehavior is Kubernetes' behavior where the autoscaler sets none
// (or leaves a direction or a field unset): scale up at once by the larger
// of 4 pods or 100% per 15 s; scale down after a 300 s window by up to 100%
// per 15 s.
func DefaultBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) autoscalingv2.HorizontalPodAutoscalerBehavior {
	out := autoscalingv2.HorizontalPodAutoscalerBehavior{}
	if b != nil {
		out = *b.DeepCopy()
	}
	up := autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	down := autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	out.ScaleUp = fill(out.ScaleUp, up)
	out.ScaleDown = fill(out.ScaleDown, down)
	return out
}

func fill(r *autoscalingv2.HPAScalingRules, d autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if r == nil {
		return &d
	}
	if r.StabilizationWindowSeconds == nil {
		r.StabilizationWindowSeconds = d.StabilizationWindowSeconds
	}
	if r.SelectPolicy == nil {
		r.SelectPolicy = d.SelectPolicy
	}
	if len(r.Policies) == 0 {
		r.Policies = d.Policies
	}
	return r
}

// Normalize bounds a desired count as Kubernetes' HPA controller does with
// behaviors: the recommendation is the lowest of the scale-up window
// (never below current) and the highest of the scale-down window; the
// policies then limit the step from the count at the start of each
// policy's period (Max picks the largest change, Min the smallest,
// Disabled none), and minReplicas/maxReplicas bound the result.
func Normalize(in Input) Output {
	b := DefaultBehavior(in.Behavior)
	up, down := in.Desired, in.Desired
	upCut := in.Now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCut := in.Now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	for _, r := range in.Recommendations {
		if r.At.After(upCut) {
			up = min(up, r.Replicas)
		}
		if r.At.After(downCut) {
			down = max(down, r.Replicas)
		}
	}
	stabilized := min(max(in.Current, up), down)
	out := Output{Stabilized: stabilized, Replicas: in.Current}
	switch {
	case stabilized > in.Current:
		limit := max(scaleUpLimit(in, b.ScaleUp), in.Current)
		allowed, reason := in.Max, "TooManyReplicas"
		if allowed > limit {
			allowed, reason = limit, "ScaleUpLimit"
		}
		out.Replicas = min(stabilized, allowed)
		out.Limited, out.Reason = out.Replicas != stabilized, reason
	case stabilized < in.Current:
		limit := min(scaleDownLimit(in, b.ScaleDown), in.Current)
		allowed, reason := in.Min, "TooFewReplicas"
		if allowed < limit {
			allowed, reason = limit, "ScaleDownLimit"
		}
		out.Replicas = max(stabilized, allowed)
		out.Limited, out.Reason = out.Replicas != stabilized, reason
	}
	if !out.Limited {
		out.Reason = "DesiredWithinRange"
	}
	return out
}

// periodStart is the count at the start of a policy's period: current
// less what was added in it, plus what was removed.
func periodStart(in Input, periodSeconds int32) int32 {
	cut := in.Now.Add(-time.Duration(periodSeconds) * time.Second)
	n := in.Current
	for _, e := range in.ScaleUps {
		if e.At.After(cut) {
			n -= e.Change
		}
	}
	for _, e := range in.ScaleDowns {
		if e.At.After(cut) {
			n += e.Change
		}
	}
	return n
}

func scaleUpLimit(in Input, r *autoscalingv2.HPAScalingRules) int32 {
	sel := *r.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return in.Current
	}
	result := int32(math.MinInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		result = math.MaxInt32
	}
	for _, p := range r.Policies {
		start := periodStart(in, p.PeriodSeconds)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if sel == autoscalingv2.MinChangePolicySelect {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

func scaleDownLimit(in Input, r *autoscalingv2.HPAScalingRules) int32 {
	sel := *r.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return in.Current
	}
	result := int32(math.MaxInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		result = math.MinInt32
	}
	for _, p := range r.Policies {
		start := periodStart(in, p.PeriodSeconds)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if sel == autoscalingv2.MinChangePolicySelect {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}
