package autoscale

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Kubernetes' defaults of the controller's flags.
const (
	// DefaultTolerance is --horizontal-pod-autoscaler-tolerance: a usage
	// ratio within 10% of 1 changes nothing.
	DefaultTolerance = 0.1
	// DefaultCPUInitializationPeriod is
	// --horizontal-pod-autoscaler-cpu-initialization-period.
	DefaultCPUInitializationPeriod = 5 * time.Minute
	// DefaultInitialReadinessDelay is
	// --horizontal-pod-autoscaler-initial-readiness-delay.
	DefaultInitialReadinessDelay = 30 * time.Second
)

// PodMetric is one pod's sample: Value in milli-units (millicores, or the
// metric's milli-value), taken at Timestamp over Window.
type PodMetric struct {
	Value     int64
	Timestamp time.Time
	Window    time.Duration
}

// Calculator computes desired replicas from pod metrics. Zero fields take
// Kubernetes' defaults.
type Calculator struct {
	Tolerance               float64
	CPUInitializationPeriod time.Duration
	InitialReadinessDelay   time.Duration
}

func (c Calculator) withDefaults() Calculator {
	if c.Tolerance <= 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.CPUInitializationPeriod <= 0 {
		c.CPUInitializationPeriod = DefaultCPUInitializationPeriod
	}
	if c.InitialReadinessDelay <= 0 {
		c.InitialReadinessDelay = DefaultInitialReadinessDelay
	}
	return c
}

// ErrNoMetrics is returned when no ready pod has a sample.
var ErrNoMetrics = errors.New("no metrics for any ready pod of the target")

// ResourceResult is the outcome of a resource utilization metric.
type ResourceResult struct {
	// Replicas is the desired replica count.
	Replicas int32
	// Utilization is the ready pods' usage as a percentage of their
	// requests (truncated, as Kubernetes reports it).
	Utilization int32
	// RawAverage is the ready pods' average usage in milli-units.
	RawAverage int64
}

// ResourceReplicas is Kubernetes' replica count for a Resource metric with
// an Utilization target: pods that are deleting or failed are ignored;
// pending pods, and (for cpu) pods still initialising or never ready, are
// unready; a usage ratio within the tolerance keeps current. When pods
// lack samples or unready pods would be scaled up, the ratio is computed
// again with missing pods at 100% of their request (or the target, if
// higher) on a scale-down and 0% on a scale-up, and unready pods at 0%;
// if that reverses the direction or falls within the tolerance, current
// is kept. Every pod's containers must request the resource.
func (c Calculator) ResourceReplicas(current, targetUtilization int32, resource corev1.ResourceName, pods []corev1.Pod, metrics map[string]PodMetric, now time.Time) (ResourceResult, error) {
	return c.ContainerResourceReplicas(current, targetUtilization, resource, "", pods, metrics, now)
}

// ContainerResourceReplicas is ResourceReplicas for a ContainerResource
// metric: utilization is the named container's usage (metrics hold that
// container's samples) over that container's requests, as Kubernetes
// computes it. An empty container is the whole pod (ResourceReplicas).
// A pod without the container is an error naming both.
func (c Calculator) ContainerResourceReplicas(current, targetUtilization int32, resource corev1.ResourceName, container string, pods []corev1.Pod, metrics map[string]PodMetric, now time.Time) (ResourceResult, error) {
	c = c.withDefaults()
	if len(pods) == 0 {
		return ResourceResult{}, errors.New("no pods of the target")
	}
	if targetUtilization <= 0 {
		return ResourceResult{}, fmt.Errorf("target utilization %d: must be positive", targetUtilization)
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, resource, now)
	values := map[string]int64{}
	for name, m := range metrics {
		if !ignored.Has(name) && !unready.Has(name) {
			values[name] = m.Value
		}
	}
	requests, err := podRequests(pods, resource, container)
	if err != nil {
		return ResourceResult{}, err
	}
	if len(values) == 0 {
		return ResourceResult{}, ErrNoMetrics
	}
	ratio, utilization, raw, err := utilizationRatio(values, requests, targetUtilization)
	if err != nil {
		return ResourceResult{}, err
	}
	out := ResourceResult{Replicas: current, Utilization: utilization, RawAverage: raw}
	scaleUpWithUnready := unready.Len() > 0 && ratio > 1.0
	if !scaleUpWithUnready && missing.Len() == 0 {
		if math.Abs(1.0-ratio) > c.Tolerance {
			out.Replicas = int32(math.Ceil(ratio * float64(ready)))
		}
		return out, nil
	}
	for name := range missing {
		switch {
		case ratio < 1.0:
			values[name] = requests[name] * int64(max(100, targetUtilization)) / 100
		case ratio > 1.0:
			values[name] = 0
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			values[name] = 0
		}
	}
	newRatio, _, _, err := utilizationRatio(values, requests, targetUtilization)
	if err != nil {
		return ResourceResult{}, err
	}
	out.Replicas = rebalanced(current, ratio, newRatio, len(values), c.Tolerance)
	return out, nil
}

// AverageValueReplicas is Kubernetes' replica count for a per-pod average
// target (a Resource metric's AverageValue, or a Pods metric), in the same
// milli-units as the samples. Missing pods count as the target on a
// scale-down and 0 on a scale-up; unready pods count as 0 on a scale-up
// (for a Resource metric, pass its name so cpu readiness applies; "" for
// a Pods metric).
func (c Calculator) AverageValueReplicas(current int32, targetAverage int64, resource corev1.ResourceName, pods []corev1.Pod, metrics map[string]PodMetric, now time.Time) (replicas int32, average int64, err error) {
	c = c.withDefaults()
	if len(pods) == 0 {
		return 0, 0, errors.New("no pods of the target")
	}
	if targetAverage <= 0 {
		return 0, 0, fmt.Errorf("target average %d: must be positive", targetAverage)
	}
	ready, unready, missing, ignored := c.groupPods(pods, metrics, resource, now)
	values := map[string]int64{}
	for name, m := range metrics {
		if !ignored.Has(name) && !unready.Has(name) {
			values[name] = m.Value
		}
	}
	if len(values) == 0 {
		return 0, 0, ErrNoMetrics
	}
	ratio, average := averageRatio(values, targetAverage)
	scaleUpWithUnready := unready.Len() > 0 && ratio > 1.0
	if !scaleUpWithUnready && missing.Len() == 0 {
		if math.Abs(1.0-ratio) <= c.Tolerance {
			return current, average, nil
		}
		return int32(math.Ceil(ratio * float64(ready))), average, nil
	}
	for name := range missing {
		switch {
		case ratio < 1.0:
			values[name] = targetAverage
		case ratio > 1.0:
			values[name] = 0
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			values[name] = 0
		}
	}
	newRatio, _ := averageRatio(values, targetAverage)
	return rebalanced(current, ratio, newRatio, len(values), c.Tolerance), average, nil
}

// rebalanced is the count after missing and unready pods were filled in:
// current when the new ratio is within the tolerance, reverses the
// direction, or would move the count against it.
func rebalanced(current int32, ratio, newRatio float64, pods int, tolerance float64) int32 {
	if math.Abs(1.0-newRatio) <= tolerance || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current
	}
	n := int32(math.Ceil(newRatio * float64(pods)))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current
	}
	return n
}

// groupPods sorts the target's pods as Kubernetes does.
func (c Calculator) groupPods(pods []corev1.Pod, metrics map[string]PodMetric, resource corev1.ResourceName, now time.Time) (ready int, unready, missing, ignored sets.Set[string]) {
	unready, missing, ignored = sets.New[string](), sets.New[string](), sets.New[string]()
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			ignored.Insert(pod.Name)
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			unready.Insert(pod.Name)
			continue
		}
		m, ok := metrics[pod.Name]
		if !ok {
			missing.Insert(pod.Name)
			continue
		}
		if resource == corev1.ResourceCPU && c.cpuUnready(pod, m, now) {
			unready.Insert(pod.Name)
			continue
		}
		ready++
	}
	return ready, unready, missing, ignored
}

// cpuUnready: a cpu sample is not trusted from a pod with no readiness
// yet; within the initialisation period, from a pod not ready or whose
// sample's window began before it became ready; after it, from a pod not
// ready that has never been ready.
func (c Calculator) cpuUnready(pod *corev1.Pod, m PodMetric, now time.Time) bool {
	var cond *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			cond = &pod.Status.Conditions[i]
		}
	}
	if cond == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(c.CPUInitializationPeriod).After(now) {
		return cond.Status == corev1.ConditionFalse || m.Timestamp.Before(cond.LastTransitionTime.Add(m.Window))
	}
	return cond.Status == corev1.ConditionFalse && start.Add(c.InitialReadinessDelay).After(cond.LastTransitionTime.Time)
}

// podRequests sums each pod's containers' requests of resource (only the
// named container's, when container is set), in milli-units; a container
// without one, or a pod without the named container, is an error naming
// it.
func podRequests(pods []corev1.Pod, resource corev1.ResourceName, container string) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for i := range pods {
		var sum int64
		found := false
		for _, ctr := range pods[i].Spec.Containers {
			if container != "" && ctr.Name != container {
				continue
			}
			found = true
			q, ok := ctr.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("pod %s: container %s requests no %s, so its utilization is undefined", pods[i].Name, ctr.Name, resource)
			}
			sum += q.MilliValue()
		}
		if container != "" && !found {
			return nil, fmt.Errorf("pod %s has no container %s", pods[i].Name, container)
		}
		out[pods[i].Name] = sum
	}
	return out, nil
}

// utilizationRatio is usage over requests of the pods with a sample, as a
// truncated percentage and its ratio to the target, and the raw average.
func utilizationRatio(values, requests map[string]int64, target int32) (ratio float64, utilization int32, rawAverage int64, err error) {
	var used, requested int64
	n := 0
	for _, name := range sortedNames(values) {
		req, ok := requests[name]
		if !ok {
			continue
		}
		used += values[name]
		requested += req
		n++
	}
	if requested == 0 || n == 0 {
		return 0, 0, 0, errors.New("no sample matches a pod of the target")
	}
	utilization = int32(used * 100 / requested)
	return float64(utilization) / float64(target), utilization, used / int64(n), nil
}

// averageRatio is the (truncated) average of the samples and its ratio
// to the target.
func averageRatio(values map[string]int64, target int64) (float64, int64) {
	var sum int64
	for _, v := range values {
		sum += v
	}
	avg := sum / int64(len(values))
	return float64(avg) / float64(target), avg
}

func sortedNames(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
