package autoscale

import (
	"errors"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
)

// FleetValue is one value measured beside the pods rather than per pod
// (an Object metric of a described object, or the sum of an External
// metric's series), summed over the members that answered.
type FleetValue struct {
	// Usage is the sum, in milli-units.
	Usage int64
	// Partial is true when a member that should have answered did not
	// (unreachable, or its metrics API is not served or failed): Usage is
	// then a lower bound of the fleet's value, which justifies a
	// scale-up but never a scale-down.
	Partial bool
}

// ValueReplicas is Kubernetes' count for a Value target of an Object or
// External metric: ceil(usage/target × the ready pods), the ready pods
// being the fleet's running pods whose Ready condition is True; a ratio
// within the tolerance keeps current; at current 0 (scaling from zero)
// it is ceil(usage/target). A Partial value never gives fewer than
// current.
func (c Calculator) ValueReplicas(current int32, v FleetValue, target int64, pods []corev1.Pod) (int32, error) {
	c = c.withDefaults()
	if target <= 0 {
		return 0, fmt.Errorf("target value %d: must be positive", target)
	}
	ratio := float64(v.Usage) / float64(target)
	var n int32
	switch {
	case current == 0:
		n = int32(math.Ceil(ratio))
	case math.Abs(1.0-ratio) <= c.Tolerance:
		return current, nil
	default:
		if len(pods) == 0 {
			return 0, errors.New("no pods of the target, so the replicas per ready pod are undefined")
		}
		n = int32(math.Ceil(ratio * float64(readyPods(pods))))
	}
	return held(current, n, v.Partial), nil
}

// PerPodValueReplicas is Kubernetes' count for an AverageValue target of
// an Object or External metric: the usage spread over the target's
// replicas (statusReplicas, the pods the target reports) is compared with
// the target per pod; outside the tolerance the count is
// ceil(usage/target). It also returns the usage per replica, as the
// status reports it. A Partial value never gives fewer than current.
func (c Calculator) PerPodValueReplicas(current, statusReplicas int32, v FleetValue, targetAverage int64) (replicas int32, average int64, err error) {
	c = c.withDefaults()
	if targetAverage <= 0 {
		return 0, 0, fmt.Errorf("target average %d: must be positive", targetAverage)
	}
	// With no replica reported yet the spread is over the replicas asked
	// for; Kubernetes divides by zero there.
	if statusReplicas <= 0 {
		statusReplicas = max(current, 1)
	}
	replicas = statusReplicas
	ratio := float64(v.Usage) / (float64(targetAverage) * float64(statusReplicas))
	if math.Abs(1.0-ratio) > c.Tolerance {
		replicas = int32(math.Ceil(float64(v.Usage) / float64(targetAverage)))
	}
	average = int64(math.Ceil(float64(v.Usage) / float64(statusReplicas)))
	return held(current, replicas, v.Partial), average, nil
}

// held keeps current where a partial value would scale down.
func held(current, n int32, partial bool) int32 {
	if partial && n < current {
		return current
	}
	return n
}

// readyPods counts the running pods whose Ready condition is True.
func readyPods(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if pods[i].Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range pods[i].Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}
