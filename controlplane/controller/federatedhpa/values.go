package federatedhpa

import (
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

// podsMetric is a Pods metric (custom.metrics.k8s.io, per pod) over the
// fleet's pods: Kubernetes' plain per-pod average, with the pods of a
// member without samples counted as missing.
func podsMetric(calc autoscale.Calculator, src *autoscalingv2.PodsMetricSource, current int32, pods []corev1.Pod, fm fleetMetric, now time.Time) metricResult {
	name := "pods metric " + src.Metric.Name
	fail := func(err error) metricResult {
		return metricResult{Name: name, Reason: "FailedGetPodsMetric", Err: fmt.Errorf("%s: %w", name, err)}
	}
	if src.Target.Type != autoscalingv2.AverageValueMetricType || src.Target.AverageValue == nil {
		return fail(errors.New("target type AverageValue with an averageValue is required"))
	}
	n, avg, err := calc.AverageValueReplicas(current, src.Target.AverageValue.MilliValue(), "", pods, fm.PerPod, now)
	if err != nil {
		return fail(err)
	}
	return metricResult{Name: name, Replicas: n, Status: autoscalingv2.MetricStatus{Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricStatus{Metric: src.Metric, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}}}}
}

// objectMetric is an Object metric: the described object's value in
// every member of the target, summed (Karmada's metrics adapter sums an
// object's metric over the members that have it), against a Value target
// with the fleet's ready pods, or an AverageValue target spread over the
// target's reported replicas.
func objectMetric(calc autoscale.Calculator, src *autoscalingv2.ObjectMetricSource, n scaleCounts, pods []corev1.Pod, fm fleetMetric) metricResult {
	name := fmt.Sprintf("%s metric %s", src.DescribedObject.Kind, src.Metric.Name)
	r, current, err := valueMetric(calc, src.Target, n, pods, fm)
	if err != nil {
		return metricResult{Name: name, Reason: "FailedGetObjectMetric", Err: fmt.Errorf("%s of %s %s: %w", name, src.DescribedObject.Kind, src.DescribedObject.Name, err)}
	}
	return metricResult{Name: name, Replicas: r, Status: autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType,
		Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: src.DescribedObject, Metric: src.Metric, Current: current}}}
}

// externalMetric is an External metric: the series matching its selector
// in every member of the target (external.metrics.k8s.io, in the
// FederatedHPA's namespace), summed, against a Value or AverageValue
// target as for an Object metric.
func externalMetric(calc autoscale.Calculator, src *autoscalingv2.ExternalMetricSource, n scaleCounts, pods []corev1.Pod, fm fleetMetric) metricResult {
	name := "external metric " + src.Metric.Name
	r, current, err := valueMetric(calc, src.Target, n, pods, fm)
	if err != nil {
		return metricResult{Name: name, Reason: "FailedGetExternalMetric", Err: fmt.Errorf("%s: %w", name, err)}
	}
	return metricResult{Name: name, Replicas: r, Status: autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricStatus{Metric: src.Metric, Current: current}}}
}

// valueMetric is the count and current value of a fleet value against a
// Value or AverageValue target.
func valueMetric(calc autoscale.Calculator, t autoscalingv2.MetricTarget, n scaleCounts, pods []corev1.Pod, fm fleetMetric) (int32, autoscalingv2.MetricValueStatus, error) {
	if !fm.Found {
		if fm.Value.Partial {
			return 0, autoscalingv2.MetricValueStatus{}, errors.New("no member that answered reports it")
		}
		return 0, autoscalingv2.MetricValueStatus{}, errors.New("no member of the target reports it")
	}
	switch {
	case t.Type == autoscalingv2.ValueMetricType && t.Value != nil:
		r, err := calc.ValueReplicas(n.Current, fm.Value, t.Value.MilliValue(), pods)
		return r, autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(fm.Value.Usage, resource.DecimalSI)}, err
	case t.Type == autoscalingv2.AverageValueMetricType && t.AverageValue != nil:
		r, avg, err := calc.PerPodValueReplicas(n.Current, n.Status, fm.Value, t.AverageValue.MilliValue())
		return r, autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)}, err
	}
	return 0, autoscalingv2.MetricValueStatus{}, fmt.Errorf("target type %q: a Value with value or an AverageValue with averageValue is required", t.Type)
}
