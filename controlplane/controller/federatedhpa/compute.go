package federatedhpa

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

// defaultUtilization is Kubernetes' metric when an autoscaler names none:
// cpu at 80% of the requests.
const defaultUtilization = 80

// memberSample is what one member answered for the target: its pods that
// belong to the member object flotilla applied, and its reading of each
// of the autoscaler's metrics. Err is set when the member, its object or
// its pods could not be read; Scheduled is the replicas the binding gives
// it, which stand for its unknown pods then. Took is how long the reads
// took.
type memberSample struct {
	Cluster   string
	Pods      []corev1.Pod
	Metrics   []memberMetric
	Scheduled int32
	Err       error
	Took      time.Duration
}

// memberMetric is one member's reading of one metric: per pod (Resource
// and Pods metrics, milli-units by pod name), or one value (Object and
// External metrics, the sum of the member's series; Found when it has
// one). Err is set when the member's metrics API for it is not served or
// failed.
type memberMetric struct {
	PerPod map[string]autoscale.PodMetric
	Value  int64
	Found  bool
	Err    error
}

// fleetSample is the pods of every member, named "<cluster>/<pod>" so
// that two members' pods of the same name stay two pods, and each
// metric's readings over the fleet, in the order of the metrics.
type fleetSample struct {
	Pods    []corev1.Pod
	Metrics []fleetMetric
	// Unanswered are the members whose pods or metrics are missing, and
	// why, sorted by cluster.
	Unanswered []string
}

// fleetMetric is one metric over the fleet: the pods' samples, or the
// members' values summed (Partial when a member did not answer), and
// whether any member had a value.
type fleetMetric struct {
	PerPod map[string]autoscale.PodMetric
	Value  autoscale.FleetValue
	Found  bool
}

// merge joins the members' samples of metrics metrics. A member whose
// pods could not be listed counts Scheduled pods of the template
// (containers, for their requests) with no metrics, which the calculator
// treats as Kubernetes treats pods with missing metrics: they hold a
// scale-down back (counted at the target) and damp a scale-up (counted at
// zero). A member whose pods were listed but whose metrics API for a
// metric is not served or failed counts its pods with no sample of that
// metric, the same way. For a value metric (Object, External) either
// makes the fleet's value partial: it may scale up, never down.
func merge(members []memberSample, containers []corev1.Container, metrics int) fleetSample {
	out := fleetSample{Metrics: make([]fleetMetric, metrics)}
	for i := range out.Metrics {
		out.Metrics[i].PerPod = map[string]autoscale.PodMetric{}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].Cluster < members[j].Cluster })
	seen := map[string]bool{}
	unanswered := func(cluster string, err error) {
		msg := fmt.Sprintf("%s: %v", cluster, err)
		if !seen[msg] {
			seen[msg] = true
			out.Unanswered = append(out.Unanswered, msg)
		}
	}
	for _, m := range members {
		if m.Err != nil {
			unanswered(m.Cluster, m.Err)
			for i := range out.Metrics {
				out.Metrics[i].Value.Partial = true
			}
		}
		if m.Pods == nil && m.Err != nil {
			for i := range m.Scheduled {
				out.Pods = append(out.Pods, corev1.Pod{
					Spec:   corev1.PodSpec{Containers: containers},
					Status: corev1.PodStatus{Phase: corev1.PodRunning},
				})
				out.Pods[len(out.Pods)-1].Name = fmt.Sprintf("%s/unanswered-%d", m.Cluster, i)
			}
			continue
		}
		// A shallow copy with the member's name: the calculator reads
		// pods and never writes them, so no deep copy of 5,000 pods.
		for _, p := range m.Pods {
			p.Name = m.Cluster + "/" + p.Name
			out.Pods = append(out.Pods, p)
		}
		for i := range min(len(m.Metrics), metrics) {
			mm, fm := m.Metrics[i], &out.Metrics[i]
			if mm.Err != nil {
				unanswered(m.Cluster, mm.Err)
				fm.Value.Partial = true
				continue
			}
			for name, v := range mm.PerPod {
				fm.PerPod[m.Cluster+"/"+name] = v
			}
			if mm.Found {
				fm.Value.Usage += mm.Value
				fm.Found = true
			}
		}
	}
	return out
}

// metricResult is one metric's proposal.
type metricResult struct {
	Replicas int32
	Status   autoscalingv2.MetricStatus
	// Name is how the metric appears in messages ("cpu resource
	// utilization (percentage of request)").
	Name string
	// Reason and Err are set when the metric gave no proposal.
	Reason string
	Err    error
}

// metricsOf is the autoscaler's metrics, Kubernetes' default when none.
func metricsOf(specs []autoscalingv2.MetricSpec) []autoscalingv2.MetricSpec {
	if len(specs) > 0 {
		return specs
	}
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](defaultUtilization)}}}}
}

// errUnsupported is wrapped by a metric type flotilla does not serve.
var errUnsupported = errors.New("not supported")

// scaleCounts is the target's replicas: Current as its spec asks, Status
// as it reports (AverageValue targets of Object and External metrics
// spread their value over the reported ones, as Kubernetes does).
type scaleCounts struct {
	Current, Status int32
}

// computeMetric is one metric's replica proposal over the fleet: Resource
// and ContainerResource (Utilization, AverageValue), Pods, Object and
// External metrics; any other type is refused by name, as the reason
// InvalidMetricSourceType.
func computeMetric(calc autoscale.Calculator, spec autoscalingv2.MetricSpec, n scaleCounts, pods []corev1.Pod, fm fleetMetric, now time.Time) metricResult {
	switch {
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		return podsMetric(calc, spec.Pods, n.Current, pods, fm, now)
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		return objectMetric(calc, spec.Object, n, pods, fm)
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		return externalMetric(calc, spec.External, n, pods, fm)
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		return resourceMetric(calc, spec.Resource.Name, "", spec.Resource.Target, n.Current, pods, fm.PerPod, now)
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		src := spec.ContainerResource
		return resourceMetric(calc, src.Name, src.Container, src.Target, n.Current, pods, fm.PerPod, now)
	}
	return metricResult{Name: string(spec.Type), Reason: "InvalidMetricSourceType",
		Err: fmt.Errorf("metric type %s: %w: flotilla's FederatedHPA reads Resource, ContainerResource, Pods, Object and External metrics", spec.Type, errUnsupported)}
}

// resourceMetric is a Resource metric's proposal, or, with a container,
// a ContainerResource metric's: that container's usage over its requests.
func resourceMetric(calc autoscale.Calculator, res corev1.ResourceName, container string, target autoscalingv2.MetricTarget, current int32, pods []corev1.Pod, usage map[string]autoscale.PodMetric, now time.Time) metricResult {
	of, failed := "", "FailedGetResourceMetric"
	if container != "" {
		of, failed = " of container "+container, "FailedGetContainerResourceMetric"
	}
	switch target.Type {
	case autoscalingv2.UtilizationMetricType:
		name := fmt.Sprintf("%s resource utilization (percentage of request)%s", res, of)
		if target.AverageUtilization == nil {
			return metricResult{Name: name, Reason: failed, Err: errors.New("target averageUtilization is not set")}
		}
		r, err := calc.ContainerResourceReplicas(current, *target.AverageUtilization, res, container, pods, usage, now)
		if err != nil {
			return metricResult{Name: name, Reason: failed, Err: fmt.Errorf("%s: %w", name, err)}
		}
		return metricResult{Name: name, Replicas: r.Replicas, Status: resourceStatus(res, container, &r.Utilization, r.RawAverage)}
	case autoscalingv2.AverageValueMetricType:
		name := fmt.Sprintf("%s resource%s", res, of)
		if target.AverageValue == nil {
			return metricResult{Name: name, Reason: failed, Err: errors.New("target averageValue is not set")}
		}
		n, avg, err := calc.AverageValueReplicas(current, target.AverageValue.MilliValue(), res, pods, usage, now)
		if err != nil {
			return metricResult{Name: name, Reason: failed, Err: fmt.Errorf("%s: %w", name, err)}
		}
		return metricResult{Name: name, Replicas: n, Status: resourceStatus(res, container, nil, avg)}
	default:
		return metricResult{Name: string(res) + of, Reason: "InvalidMetricSourceType",
			Err: fmt.Errorf("resource metric %s%s: target type %q: %w (Utilization or AverageValue)", res, of, target.Type, errUnsupported)}
	}
}

// resourceStatus is a Resource metric's status, or a ContainerResource
// metric's when container is set.
func resourceStatus(res corev1.ResourceName, container string, utilization *int32, rawMilli int64) autoscalingv2.MetricStatus {
	avg := resource.NewMilliQuantity(rawMilli, resource.DecimalSI)
	if res == corev1.ResourceMemory {
		avg = resource.NewQuantity(rawMilli/1000, resource.BinarySI)
	}
	current := autoscalingv2.MetricValueStatus{AverageUtilization: utilization, AverageValue: avg}
	if container != "" {
		return autoscalingv2.MetricStatus{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
			Name: res, Container: container, Current: current}}
	}
	return autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: res, Current: current}}
}

// proposal is what the metrics ask for, before the behavior bounds it.
type proposal struct {
	Replicas int32
	// Metric names the metric that decided, or says why none did.
	Metric   string
	Statuses []autoscalingv2.MetricStatus
	// Invalid is the first metric that gave no proposal, if any.
	Invalid *metricResult
	// Active is false when no metric gave a proposal.
	Active bool
}

// propose is Kubernetes' choice over several metrics: the largest
// proposal; no scale-down while a metric is invalid (its proposal might
// be the largest); nothing when every metric is invalid.
func propose(calc autoscale.Calculator, specs []autoscalingv2.MetricSpec, n scaleCounts, s fleetSample, now time.Time) proposal {
	current := n.Current
	out := proposal{Replicas: current}
	var best int32
	var decided string
	valid := 0
	for i, spec := range metricsOf(specs) {
		var fm fleetMetric
		if i < len(s.Metrics) {
			fm = s.Metrics[i]
		}
		r := computeMetric(calc, spec, n, s.Pods, fm, now)
		if r.Err != nil {
			if out.Invalid == nil {
				out.Invalid = &r
			}
			continue
		}
		valid++
		out.Statuses = append(out.Statuses, r.Status)
		if valid == 1 || r.Replicas > best {
			best, decided = r.Replicas, r.Name
		}
	}
	if valid == 0 {
		return out
	}
	out.Active = true
	if out.Invalid != nil && best < current {
		return out
	}
	out.Replicas, out.Metric = best, decided
	return out
}

// unansweredMessage names the members without pods or metrics.
func unansweredMessage(u []string) string {
	if len(u) == 0 {
		return ""
	}
	return "; members without metrics (counted as missing: their pods without samples, and never a scale-down on a partial Object or External value): " + strings.Join(u, "; ")
}
