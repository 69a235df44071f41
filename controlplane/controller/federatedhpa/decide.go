package federatedhpa

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

// history is one FederatedHPA's past recommendations and scalings, kept
// in memory as Karmada's and Kubernetes' controllers keep them: a new
// leader starts with none, which only makes its first scale-down wait a
// full window.
type history struct {
	recommendations      []autoscale.Recommendation
	scaleUps, scaleDowns []autoscale.ScaleEvent
}

// trim drops what no window or policy period of b can reach any more.
func (h *history) trim(b autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) {
	longest := max(*b.ScaleUp.StabilizationWindowSeconds, *b.ScaleDown.StabilizationWindowSeconds)
	for _, r := range []*autoscalingv2.HPAScalingRules{b.ScaleUp, b.ScaleDown} {
		for _, p := range r.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	cut := now.Add(-time.Duration(longest)*time.Second - time.Second)
	keep := func(at time.Time) bool { return at.After(cut) }
	h.recommendations = filter(h.recommendations, func(r autoscale.Recommendation) bool { return keep(r.At) })
	h.scaleUps = filter(h.scaleUps, func(e autoscale.ScaleEvent) bool { return keep(e.At) })
	h.scaleDowns = filter(h.scaleDowns, func(e autoscale.ScaleEvent) bool { return keep(e.At) })
}

func filter[T any](in []T, keep func(T) bool) []T {
	out := in[:0]
	for _, v := range in {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// decision is one pass's outcome: the replicas to write and the
// conditions that say why.
type decision struct {
	Replicas   int32
	Reason     string
	Conditions []autoscalingv2.HorizontalPodAutoscalerCondition
}

// decide is the pure core of a pass, Kubernetes' order of checks: a
// target at zero replicas is left alone (scaling disabled); one outside
// the bounds is brought inside them; otherwise the metrics' proposal goes
// through the stabilization windows, the policies and the bounds. It
// records the recommendation in h; the caller records the scaling.
func decide(spec api.FederatedHPASpec, current int32, p proposal, unanswered []string, h *history, now time.Time) decision {
	minR := ptr.Deref(spec.MinReplicas, 1)
	d := decision{Replicas: current}
	switch {
	case current == 0 && minR != 0:
		d.set(autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
		return d
	case current > spec.MaxReplicas:
		d.Replicas, d.Reason = spec.MaxReplicas, "Current number of replicas above Spec.MaxReplicas"
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
		return d
	case current < minR:
		d.Replicas, d.Reason = minR, "Current number of replicas below Spec.MinReplicas"
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
		return d
	}
	if !p.Active {
		reason, msg := "FailedGetResourceMetric", "no metric gave a replica count"
		if p.Invalid != nil {
			reason, msg = p.Invalid.Reason, p.Invalid.Err.Error()
		}
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
		d.set(autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "the HPA was unable to compute the replica count: "+msg+unansweredMessage(unanswered))
		return d
	}
	active := fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", p.Metric)
	if p.Metric == "" {
		active = "the HPA keeps the current replica count: a metric is invalid, so it does not scale down"
	}
	if p.Invalid != nil {
		active += "; invalid: " + p.Invalid.Err.Error()
	}
	d.set(autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", active+unansweredMessage(unanswered))
	out := autoscale.Normalize(autoscale.Input{
		Current: current, Desired: p.Replicas, Min: minR, Max: spec.MaxReplicas, Behavior: spec.Behavior,
		Recommendations: h.recommendations, ScaleUps: h.scaleUps, ScaleDowns: h.scaleDowns, Now: now,
	})
	h.recommendations = append(h.recommendations, autoscale.Recommendation{Replicas: p.Replicas, At: now})
	switch {
	case out.Stabilized < p.Replicas:
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation")
	case out.Stabilized > p.Replicas:
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	default:
		d.set(autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	}
	status := corev1.ConditionFalse
	if out.Limited {
		status = corev1.ConditionTrue
	}
	d.set(autoscalingv2.ScalingLimited, status, out.Reason, limitMessages[out.Reason])
	d.Replicas = out.Replicas
	if p.Replicas > current {
		d.Reason = p.Metric + " above target"
	} else {
		d.Reason = "All metrics below target"
	}
	return d
}

// limitMessages are Kubernetes' messages of the ScalingLimited reasons.
var limitMessages = map[string]string{
	"DesiredWithinRange": "the desired count is within the acceptable range",
	"ScaleUpLimit":       "the desired replica count is increasing faster than the maximum scale rate",
	"ScaleDownLimit":     "the desired replica count is decreasing faster than the maximum scale rate",
	"TooManyReplicas":    "the desired replica count is more than the maximum replica count",
	"TooFewReplicas":     "the desired replica count is less than the minimum replica count",
}

func (d *decision) set(t autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason, msg string) {
	d.Conditions = setCondition(d.Conditions, t, s, reason, msg, time.Time{})
}

// setCondition sets a condition in list; the transition time moves only
// when the status does (at is stamped by the caller: zero here).
func setCondition(list []autoscalingv2.HorizontalPodAutoscalerCondition, t autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason, msg string, at time.Time) []autoscalingv2.HorizontalPodAutoscalerCondition {
	for i := range list {
		if list[i].Type == t {
			if list[i].Status != s {
				list[i].LastTransitionTime = metav1.Time{Time: at}
			}
			list[i].Status, list[i].Reason, list[i].Message = s, reason, msg
			return list
		}
	}
	return append(list, autoscalingv2.HorizontalPodAutoscalerCondition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.Time{Time: at}})
}

// mergeConditions writes next over prev, keeping prev's transition time
// where the status did not move and stamping now where it did; the
// conditions next does not set are kept.
func mergeConditions(prev, next []autoscalingv2.HorizontalPodAutoscalerCondition, now time.Time) []autoscalingv2.HorizontalPodAutoscalerCondition {
	out := make([]autoscalingv2.HorizontalPodAutoscalerCondition, 0, len(prev)+len(next))
	for _, c := range prev {
		out = append(out, *c.DeepCopy())
	}
	for _, c := range next {
		out = setCondition(out, c.Type, c.Status, c.Reason, c.Message, now)
	}
	return out
}
