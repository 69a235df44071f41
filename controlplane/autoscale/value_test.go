package autoscale

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodsMetricReplicas: a Pods metric (custom.metrics.k8s.io, a per-pod
// AverageValue target) over the fleet's pods, Kubernetes' plain-metric
// cases: no cpu readiness rule applies, only pending pods are unready.
func TestPodsMetricReplicas(t *testing.T) {
	four := []corev1.Pod{pod("east/a", 0), pod("east/b", 0), pod("west/a", 0), pod("west/b", 0)}
	for _, tc := range []struct {
		name    string
		current int32
		pods    []corev1.Pod
		metrics map[string]int64
		want    int32
		average int64
	}{
		{name: "average 20 of a target 10 doubles", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 20000, "east/b": 20000, "west/a": 20000, "west/b": 20000}, want: 8, average: 20000},
		{name: "within the tolerance nothing changes", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 10500, "east/b": 10900, "west/a": 9800, "west/b": 10400}, want: 4, average: 10400},
		{name: "scale down by the average", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 5000, "east/b": 5000, "west/a": 5000, "west/b": 5000}, want: 2, average: 5000},
		{name: "a member's pods missing on a scale-up count as 0", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 30000, "east/b": 30000}, want: 6, average: 30000},
		{name: "a member's pods missing on a scale-down count at the target, which damps it", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 2000, "east/b": 2000}, want: 3, average: 2000},
		{name: "a member's pods missing on a small scale-down bring it within the tolerance: no change", current: 4, pods: four,
			metrics: map[string]int64{"east/a": 8500, "east/b": 8500}, want: 4, average: 8500},
		{name: "a pending pod on a scale-up counts as 0", current: 4,
			pods:    []corev1.Pod{pod("east/a", 0), pod("east/b", 0), pod("west/a", 0), pod("west/b", 0, phase(corev1.PodPending))},
			metrics: map[string]int64{"east/a": 20000, "east/b": 20000, "west/a": 20000}, want: 6, average: 20000},
		{name: "a never-ready running pod is sampled (no cpu rule for a Pods metric)", current: 2,
			pods:    []corev1.Pod{pod("east/a", 0), pod("west/a", 0, neverReady)},
			metrics: map[string]int64{"east/a": 20000, "west/a": 20000}, want: 4, average: 20000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, avg, err := Calculator{}.AverageValueReplicas(tc.current, 10000, "", tc.pods, samples(tc.metrics), now)
			if err != nil || got != tc.want || avg != tc.average {
				t.Fatalf("got %d (average %d), %v; want %d (average %d)", got, avg, err, tc.want, tc.average)
			}
		})
	}
}

// TestValueReplicas: a Value target of an Object or External metric,
// scaled by the fleet's ready pods.
func TestValueReplicas(t *testing.T) {
	three := []corev1.Pod{pod("east/a", 0), pod("east/b", 0), pod("west/a", 0)}
	for _, tc := range []struct {
		name    string
		current int32
		value   FleetValue
		pods    []corev1.Pod
		want    int32
		err     string
	}{
		{name: "twice the target doubles the ready pods", current: 3, value: FleetValue{Usage: 20000}, pods: three, want: 6},
		{name: "within the tolerance nothing changes", current: 3, value: FleetValue{Usage: 10900}, pods: three, want: 3},
		{name: "half the target halves", current: 4, value: FleetValue{Usage: 5000},
			pods: append([]corev1.Pod{pod("west/b", 0)}, three...), want: 2},
		{name: "only ready running pods count", current: 3, value: FleetValue{Usage: 20000},
			pods: []corev1.Pod{pod("east/a", 0), pod("east/b", 0, neverReady), pod("west/a", 0, phase(corev1.PodPending))}, want: 2},
		{name: "a partial value scales up", current: 3, value: FleetValue{Usage: 20000, Partial: true}, pods: three, want: 6},
		{name: "a partial value never scales down", current: 3, value: FleetValue{Usage: 1000, Partial: true}, pods: three, want: 3},
		{name: "from zero: ceil(usage/target)", current: 0, value: FleetValue{Usage: 25000}, want: 3},
		{name: "no pods", current: 3, value: FleetValue{Usage: 20000}, err: "no pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Calculator{}.ValueReplicas(tc.current, tc.value, 10000, tc.pods)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestPerPodValueReplicas: an AverageValue target of an Object or
// External metric, against the replicas the target reports.
func TestPerPodValueReplicas(t *testing.T) {
	for _, tc := range []struct {
		name            string
		current, status int32
		value           FleetValue
		want            int32
		average         int64
	}{
		{name: "ceil(usage/target)", current: 2, status: 2, value: FleetValue{Usage: 45000}, want: 5, average: 22500},
		{name: "within the tolerance of the reported replicas", current: 4, status: 4, value: FleetValue{Usage: 41000}, want: 4, average: 10250},
		{name: "the reported replicas, not the asked ones, set the tolerance", current: 6, status: 4, value: FleetValue{Usage: 41000}, want: 4, average: 10250},
		{name: "scale down", current: 4, status: 4, value: FleetValue{Usage: 15000}, want: 2, average: 3750},
		{name: "a partial value never scales down", current: 4, status: 4, value: FleetValue{Usage: 15000, Partial: true}, want: 4, average: 3750},
		{name: "a partial value scales up", current: 2, status: 2, value: FleetValue{Usage: 45000, Partial: true}, want: 5, average: 22500},
		{name: "no replica reported yet: spread over the asked ones", current: 2, status: 0, value: FleetValue{Usage: 45000}, want: 5, average: 22500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, avg, err := Calculator{}.PerPodValueReplicas(tc.current, tc.status, tc.value, 10000)
			if err != nil || got != tc.want || avg != tc.average {
				t.Fatalf("got %d (average %d), %v; want %d (average %d)", got, avg, err, tc.want, tc.average)
			}
		})
	}
	if _, _, err := (Calculator{}).PerPodValueReplicas(1, 1, FleetValue{Usage: 1}, 0); err == nil {
		t.Fatal("a zero target is accepted")
	}
}
