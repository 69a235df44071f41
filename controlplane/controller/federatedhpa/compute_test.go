package federatedhpa

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/autoscale"
)

var now = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// pod is a running pod, ready for ten minutes, requesting cpu.
func pod(name, cpuRequest string) corev1.Pod {
	started := metav1.NewTime(now.Add(-10 * time.Minute))
	p := corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}}},
	}
	p.Name = name
	return p
}

func cpu(milli int64) autoscale.PodMetric {
	return autoscale.PodMetric{Value: milli, Timestamp: now.Add(-5 * time.Second), Window: 15 * time.Second}
}

func utilization(target int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)}}}
}

// cpuSample is a member's cpu samples, by pod, as the reading of one
// Resource metric.
func cpuSample(v map[string]int64) []memberMetric {
	out := map[string]autoscale.PodMetric{}
	for k, m := range v {
		out[k] = cpu(m)
	}
	return []memberMetric{{PerPod: out}}
}

func TestMerge(t *testing.T) {
	containers := []corev1.Container{{Name: "c"}}
	members := []memberSample{
		{Cluster: "west", Pods: []corev1.Pod{pod("web-1", "100m")}, Metrics: cpuSample(map[string]int64{"web-1": 50})},
		// The same pod name in another member is another pod.
		{Cluster: "east", Pods: []corev1.Pod{pod("web-1", "100m")}, Metrics: cpuSample(map[string]int64{"web-1": 150})},
		// Unreachable: its two scheduled replicas stand as pods without metrics.
		{Cluster: "north", Scheduled: 2, Err: errors.New("connection refused")},
		// Listed, but no metrics API: its pods count, without metrics.
		{Cluster: "south", Pods: []corev1.Pod{pod("web-9", "100m")}, Metrics: []memberMetric{{Err: errors.New("the server could not find the requested resource")}}},
	}
	got := merge(members, containers, 1)
	var names []string
	for _, p := range got.Pods {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"east/web-1", "north/unanswered-0", "north/unanswered-1", "south/web-9", "west/web-1"}, names); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"east/web-1": 150, "west/web-1": 50}, values(got.Metrics[0].PerPod)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"north: connection refused", "south: the server could not find the requested resource"}, got.Unanswered); diff != "" {
		t.Errorf("unanswered (-want +got):\n%s", diff)
	}
	if got.Pods[1].Spec.Containers[0].Name != "c" {
		t.Errorf("a placeholder has no template containers: %+v", got.Pods[1].Spec)
	}
}

// TestMergeValues: an Object or External metric's value is the sum over
// the members that have one; a member that did not answer makes it
// partial; one that answered without a value adds nothing.
func TestMergeValues(t *testing.T) {
	got := merge([]memberSample{
		{Cluster: "east", Pods: []corev1.Pod{}, Metrics: []memberMetric{{Value: 3000, Found: true}, {Value: 1000, Found: true}}},
		{Cluster: "west", Pods: []corev1.Pod{}, Metrics: []memberMetric{{Value: 4000, Found: true}, {}}},
		{Cluster: "south", Pods: []corev1.Pod{}, Metrics: []memberMetric{{Value: 500, Found: true}, {Err: errors.New("external metric queue: external.metrics.k8s.io is not served")}}},
	}, nil, 2)
	if v := got.Metrics[0]; v.Value != (autoscale.FleetValue{Usage: 7500}) || !v.Found {
		t.Errorf("first metric %+v, want 7500 from every member", v)
	}
	if v := got.Metrics[1]; v.Value != (autoscale.FleetValue{Usage: 1000, Partial: true}) || !v.Found {
		t.Errorf("second metric %+v, want a partial 1000", v)
	}
	if diff := cmp.Diff([]string{"south: external metric queue: external.metrics.k8s.io is not served"}, got.Unanswered); diff != "" {
		t.Errorf("unanswered (-want +got):\n%s", diff)
	}
}

func values(m map[string]autoscale.PodMetric) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		out[k] = v.Value
	}
	return out
}

// fleetOf is a fleet sample whose n metrics all read the same per-pod
// values.
func fleetOf(pods []corev1.Pod, n int, v map[string]int64) fleetSample {
	s := fleetSample{Pods: pods}
	for range n {
		s.Metrics = append(s.Metrics, fleetMetric{PerPod: cpuSample(v)[0].PerPod})
	}
	return s
}

func TestPropose(t *testing.T) {
	calc := autoscale.Calculator{}
	twoPods := []corev1.Pod{pod("a/p", "100m"), pod("b/p", "100m")}
	high := map[string]int64{"a/p": 200, "b/p": 200}
	low := map[string]int64{"a/p": 10, "b/p": 10}
	// One member unreachable with two replicas: on a scale-down its pods
	// count at the target, which holds the scale-down back.
	lowUnreachable := merge([]memberSample{
		{Cluster: "a", Pods: []corev1.Pod{pod("p", "100m")}, Metrics: cpuSample(map[string]int64{"p": 10})},
		{Cluster: "b", Scheduled: 3, Err: errors.New("timeout")},
	}, twoPods[0].Spec.Containers, 1)
	containerCPU := func(container string) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
			Name: corev1.ResourceCPU, Container: container, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](100)}}}
	}
	// The pods run no container "sidecar": a metric of it gives no proposal.
	container := containerCPU("sidecar")
	// Pods of two containers: app requests 100m, sidecar 900m. The app's
	// 200m is 200% of its own request, 20% of the pod's.
	withSidecar := func(name string) corev1.Pod {
		p := pod(name, "100m")
		p.Spec.Containers[0].Name = "app"
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("900m")}}})
		return p
	}
	twoContainers := []corev1.Pod{withSidecar("a/p"), withSidecar("b/p")}
	averageValue := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(50, resource.DecimalSI)}}}
	for _, tc := range []struct {
		name        string
		specs       []autoscalingv2.MetricSpec
		current     int32
		sample      fleetSample
		want        int32
		active      bool
		invalidText string
	}{
		{name: "utilization 200% of a 100% target doubles", specs: []autoscalingv2.MetricSpec{utilization(100)}, current: 2, sample: fleetOf(twoPods, 1, high), want: 4, active: true},
		{name: "no metrics is Kubernetes' cpu 80%", current: 2, sample: fleetOf(twoPods, 1, high), want: 5, active: true},
		{name: "average value 200m of a 50m target", specs: []autoscalingv2.MetricSpec{averageValue}, current: 2, sample: fleetOf(twoPods, 1, high), want: 8, active: true},
		{name: "the largest metric wins", specs: []autoscalingv2.MetricSpec{utilization(100), averageValue}, current: 2, sample: fleetOf(twoPods, 2, high), want: 8, active: true},
		{name: "a container's utilization is over its own request", specs: []autoscalingv2.MetricSpec{containerCPU("app")}, current: 2, sample: fleetOf(twoContainers, 1, high), want: 4, active: true},
		{name: "a ContainerResource metric of a container the pods lack names both", specs: []autoscalingv2.MetricSpec{container}, current: 2, sample: fleetOf(twoPods, 1, high), want: 2, invalidText: "pod a/p has no container sidecar"},
		{name: "an invalid metric does not block a scale-up", specs: []autoscalingv2.MetricSpec{container, utilization(100)}, current: 2, sample: fleetOf(twoPods, 2, high), want: 4, active: true, invalidText: "of container sidecar"},
		{name: "an invalid metric blocks a scale-down", specs: []autoscalingv2.MetricSpec{container, utilization(100)}, current: 2, sample: fleetOf(twoPods, 2, low), want: 2, active: true, invalidText: "of container sidecar"},
		{name: "low usage scales down", specs: []autoscalingv2.MetricSpec{utilization(100)}, current: 2, sample: fleetOf(twoPods, 1, low), want: 1, active: true},
		{name: "an unreachable member's replicas hold a scale-down back", specs: []autoscalingv2.MetricSpec{utilization(100)}, current: 4, sample: lowUnreachable, want: 4, active: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := propose(calc, tc.specs, scaleCounts{Current: tc.current, Status: tc.current}, tc.sample, now)
			if p.Replicas != tc.want || p.Active != tc.active {
				t.Errorf("replicas %d active %v, want %d %v (%+v)", p.Replicas, p.Active, tc.want, tc.active, p)
			}
			switch {
			case tc.invalidText == "" && p.Invalid != nil:
				t.Errorf("invalid metric %v", p.Invalid.Err)
			case tc.invalidText != "" && (p.Invalid == nil || !strings.Contains(p.Invalid.Err.Error(), tc.invalidText) || p.Invalid.Reason != "FailedGetContainerResourceMetric"):
				t.Errorf("invalid %+v, want FailedGetContainerResourceMetric naming %q", p.Invalid, tc.invalidText)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	spec := api.FederatedHPASpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 6,
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}}
	active := func(n int32) proposal { return proposal{Replicas: n, Metric: "cpu", Active: true} }
	for _, tc := range []struct {
		name    string
		current int32
		p       proposal
		past    []autoscale.Recommendation
		want    int32
		conds   map[autoscalingv2.HorizontalPodAutoscalerConditionType]string
	}{
		{name: "within range", current: 3, p: active(4), want: 4,
			conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"AbleToScale": "True/ReadyForNewScale", "ScalingActive": "True/ValidMetricFound", "ScalingLimited": "False/DesiredWithinRange"}},
		{name: "above the maximum", current: 3, p: active(9), want: 6,
			conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"ScalingLimited": "True/TooManyReplicas"}},
		{name: "below the minimum", current: 3, p: active(1), want: 2,
			conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"ScalingLimited": "True/TooFewReplicas"}},
		{name: "a scale-down waits for its window", current: 5, p: active(2), past: []autoscale.Recommendation{{Replicas: 5, At: now.Add(-30 * time.Second)}}, want: 5,
			conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"AbleToScale": "True/ScaleDownStabilized"}},
		{name: "after its window it comes", current: 5, p: active(2), past: []autoscale.Recommendation{{Replicas: 5, At: now.Add(-90 * time.Second)}}, want: 2},
		{name: "zero replicas disable scaling", current: 0, p: active(4), want: 0,
			conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"ScalingActive": "False/ScalingDisabled"}},
		{name: "outside the bounds is brought in", current: 9, p: active(9), want: 6},
		{name: "no valid metric names it and members without metrics", current: 3,
			p:    proposal{Replicas: 3, Invalid: &metricResult{Reason: "InvalidMetricSourceType", Err: errors.New("metric type External: not supported")}},
			want: 3, conds: map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{"ScalingActive": "False/InvalidMetricSourceType"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &history{recommendations: tc.past}
			d := decide(spec, tc.current, tc.p, []string{"north: timeout"}, h, now)
			if d.Replicas != tc.want {
				t.Errorf("replicas %d, want %d", d.Replicas, tc.want)
			}
			for typ, want := range tc.conds {
				got := "absent"
				for _, c := range d.Conditions {
					if string(c.Type) == string(typ) {
						got = string(c.Status) + "/" + c.Reason
						if c.Type == autoscalingv2.ScalingActive && !strings.Contains(c.Message, "north: timeout") && c.Reason != "ScalingDisabled" {
							t.Errorf("ScalingActive does not name the member without metrics: %q", c.Message)
						}
					}
				}
				if got != want {
					t.Errorf("condition %s: %s, want %s", typ, got, want)
				}
			}
		})
	}
}

func TestSelectorOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector any
		want     string
		err      string
	}{
		{name: "match labels", selector: map[string]any{"matchLabels": map[string]any{"app": "web"}}, want: "app=web"},
		{name: "a plain map (ReplicationController)", selector: map[string]any{"app": "web"}, want: "app=web"},
		{name: "missing", err: "missing or empty"},
		{name: "empty selects the namespace", selector: map[string]any{"matchLabels": map[string]any{}}, err: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
			if tc.selector != nil {
				obj.Object["spec"].(map[string]any)["selector"] = tc.selector
			}
			sel, err := selectorOf(obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || sel.String() != tc.want {
				t.Fatalf("selector %v, %v; want %s", sel, err, tc.want)
			}
		})
	}
}

func TestUsageOfDropsPodsNotListed(t *testing.T) {
	item := func(name, cpu string) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name, "namespace": "default"},
			"timestamp": now.Format(time.RFC3339), "window": "10s",
			"containers": []any{map[string]any{"name": "c", "usage": map[string]any{"cpu": cpu, "memory": "1Mi"}}}}}
	}
	list := &unstructured.UnstructuredList{Items: []unstructured.Unstructured{item("web-1", "250m"), item("other", "8")}}
	got, err := usageOf(list, []corev1.Pod{pod("web-1", "100m")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"web-1": 250}, values(got[usageKey{Resource: corev1.ResourceCPU}])); diff != "" {
		t.Errorf("cpu (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"web-1": 250}, values(got[usageKey{Resource: corev1.ResourceCPU, Container: "c"}])); diff != "" {
		t.Errorf("container c's cpu (-want +got):\n%s", diff)
	}
	if w := got[usageKey{Resource: corev1.ResourceCPU}]["web-1"].Window; w != 10*time.Second {
		t.Errorf("window %s", w)
	}
}
