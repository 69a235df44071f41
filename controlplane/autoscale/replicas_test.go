package autoscale

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// pod is a running pod, ready since an hour, requesting cpu milli-cores
// (none when negative).
func pod(name string, cpu int64, mods ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ctr := corev1.Container{Name: "app"}
	if cpu >= 0 {
		ctr.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI)}
	}
	p.Spec.Containers = []corev1.Container{ctr}
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &metav1.Time{Time: now.Add(-time.Hour)}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: now.Add(-time.Hour)}}}
	for _, m := range mods {
		m(&p)
	}
	return p
}

func neverReady(p *corev1.Pod) {
	p.Status.Conditions[0].Status = corev1.ConditionFalse
	p.Status.Conditions[0].LastTransitionTime = *p.Status.StartTime
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// initialising started a minute ago and became ready 10 s ago: a sample
// over the last 30 s still covers its start-up.
func initialising(p *corev1.Pod) {
	p.Status.StartTime = &metav1.Time{Time: now.Add(-time.Minute)}
	p.Status.Conditions[0].LastTransitionTime = metav1.Time{Time: now.Add(-10 * time.Second)}
}

func samples(values map[string]int64) map[string]PodMetric {
	out := map[string]PodMetric{}
	for k, v := range values {
		out[k] = PodMetric{Value: v, Timestamp: now, Window: 30 * time.Second}
	}
	return out
}

// TestResourceReplicas: the HPA algorithm's documented cases for a cpu
// utilization target (Kubernetes' replica calculator tests and the
// algorithm details of its HorizontalPodAutoscaler documentation).
func TestResourceReplicas(t *testing.T) {
	for _, tc := range []struct {
		name        string
		current     int32
		target      int32
		pods        []corev1.Pod
		metrics     map[string]int64
		want        int32
		utilization int32
		err         string
	}{
		{name: "scale up: ceil(ratio x ready pods)", current: 3, target: 30,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000)}, metrics: map[string]int64{"a": 300, "b": 500, "c": 700}, want: 5, utilization: 50},
		{name: "scale down", current: 5, target: 50,
			pods:    []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000), pod("d", 1000), pod("e", 1000)},
			metrics: map[string]int64{"a": 100, "b": 300, "c": 500, "d": 250, "e": 250}, want: 3, utilization: 28},
		{name: "within the 0.1 tolerance nothing changes", current: 3, target: 100,
			pods: []corev1.Pod{pod("a", 900), pod("b", 1000), pod("c", 1100)}, metrics: map[string]int64{"a": 1010, "b": 1030, "c": 1020}, want: 3, utilization: 102},
		{name: "an unready pod counts as 0 on a scale-up", current: 3, target: 30,
			pods: []corev1.Pod{pod("a", 1000, neverReady), pod("b", 1000), pod("c", 1000)}, metrics: map[string]int64{"a": 300, "b": 500, "c": 700}, want: 4, utilization: 60},
		{name: "a pod initialising is not sampled for cpu", current: 2, target: 50,
			pods: []corev1.Pod{pod("a", 1000, initialising), pod("b", 1000)}, metrics: map[string]int64{"a": 3000, "b": 500}, want: 2, utilization: 50},
		{name: "missing metrics, ratio 1: no change", current: 2, target: 100,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000)}, metrics: map[string]int64{"a": 1000}, want: 2, utilization: 100},
		{name: "missing metrics on a scale-up count as 0", current: 4, target: 100,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000), pod("d", 1000)}, metrics: map[string]int64{"a": 4000, "b": 4000}, want: 8, utilization: 400},
		{name: "missing metrics on a scale-down count as 100% and may reverse it: no change", current: 4, target: 50,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000), pod("d", 1000)}, metrics: map[string]int64{"a": 100, "b": 100}, want: 4, utilization: 10},
		{name: "missing metrics on a scale-down count as the target above 100%", current: 4, target: 200,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000), pod("d", 1000)}, metrics: map[string]int64{"a": 100, "b": 100}, want: 3, utilization: 10},
		{name: "failed and deleting pods are ignored", current: 3, target: 50,
			pods:    []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000, phase(corev1.PodFailed)), pod("d", 1000, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} })},
			metrics: map[string]int64{"a": 1000, "b": 1000, "c": 0, "d": 0}, want: 4, utilization: 100},
		{name: "a pending pod is unready", current: 3, target: 50,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000, phase(corev1.PodPending))}, metrics: map[string]int64{"a": 1000, "b": 1000}, want: 4, utilization: 100},
		{name: "a container without a request", current: 1, target: 50,
			pods: []corev1.Pod{pod("a", -1)}, metrics: map[string]int64{"a": 1000}, err: "pod a: container app requests no cpu"},
		{name: "no samples", current: 2, target: 50,
			pods: []corev1.Pod{pod("a", 1000), pod("b", 1000)}, metrics: map[string]int64{}, err: ErrNoMetrics.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Calculator{}.ResourceReplicas(tc.current, tc.target, corev1.ResourceCPU, tc.pods, samples(tc.metrics), now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Replicas != tc.want || got.Utilization != tc.utilization {
				t.Fatalf("got %+v, %v; want %d replicas at %d%%", got, err, tc.want, tc.utilization)
			}
		})
	}
}

// TestAverageValueReplicas: a per-pod average target (a Pods metric).
func TestAverageValueReplicas(t *testing.T) {
	three := []corev1.Pod{pod("a", 1000), pod("b", 1000), pod("c", 1000)}
	for _, tc := range []struct {
		current int32
		metrics map[string]int64
		want    int32
	}{
		{3, map[string]int64{"a": 10000, "b": 12000, "c": 14000}, 4},
		{3, map[string]int64{"a": 10000, "b": 10500, "c": 11000}, 3},
		{3, map[string]int64{"a": 2000, "b": 2000}, 2},
		{3, map[string]int64{"a": 30000, "b": 30000}, 6},
	} {
		t.Run(fmt.Sprint(tc.metrics), func(t *testing.T) {
			got, _, err := Calculator{}.AverageValueReplicas(tc.current, 10000, "", three, samples(tc.metrics), now)
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	if _, _, err := (Calculator{}).AverageValueReplicas(3, 10000, "", three, nil, now); !errors.Is(err, ErrNoMetrics) {
		t.Fatalf("no samples: %v", err)
	}
}
