package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// member is one member's reflected status.
func member(cluster string, status map[string]any) interpret.Member {
	return interpret.Member{Cluster: cluster, Applied: true, Status: status, Generation: 1, ObservedGeneration: 1, ResourceTemplateGeneration: 1}
}

// uncollected is a member whose status has not been collected yet.
func uncollected(cluster string) interpret.Member {
	return interpret.Member{Cluster: cluster}
}

type aggregateCase struct {
	name     string
	template *unstructured.Unstructured
	items    []interpret.Member
	want     map[string]any
}

func runAggregate(t *testing.T, cases []aggregateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := interpret.AggregateStatus(tc.template, tc.items)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AggregateStatus (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAggregateCronJob follows Karmada's aggregateCronJobStatus.
func TestAggregateCronJob(t *testing.T) {
	ref := func(name string) map[string]any { return map[string]any{"kind": "Job", "name": name} }
	runAggregate(t, []aggregateCase{
		{
			name:     "active Jobs concatenated in cluster order, latest schedule and success times",
			template: makeObj("CronJob").Obj(),
			items: []interpret.Member{
				member("west", map[string]any{"active": []any{ref("c-2")}, "lastScheduleTime": "2026-01-01T10:05:00Z", "lastSuccessfulTime": "2026-01-01T09:00:00Z"}),
				member("east", map[string]any{"active": []any{ref("c-1")}, "lastScheduleTime": "2026-01-01T10:00:00Z", "lastSuccessfulTime": "2026-01-01T09:30:00Z"}),
			},
			want: map[string]any{
				"active":             []any{ref("c-1"), ref("c-2")},
				"lastScheduleTime":   "2026-01-01T10:05:00Z",
				"lastSuccessfulTime": "2026-01-01T09:30:00Z",
			},
		},
		{
			name:     "nothing scheduled yet",
			template: makeObj("CronJob").Obj(),
			items:    []interpret.Member{member("east", nil), member("west", map[string]any{})},
			want:     map[string]any{},
		},
	})
}

// TestAggregatePod follows Karmada's aggregatePodStatus.
func TestAggregatePod(t *testing.T) {
	running := map[string]any{"running": map[string]any{"startedAt": "2026-01-01T10:00:00Z"}}
	waiting := map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}
	runAggregate(t, []aggregateCase{
		{
			name:     "Failed anywhere wins; container statuses keep ready and state only",
			template: makeObj("Pod").Obj(),
			items: []interpret.Member{
				member("east", map[string]any{"phase": "Running", "containerStatuses": []any{
					map[string]any{"name": "web", "ready": true, "restartCount": int64(2), "state": running},
				}}),
				member("west", map[string]any{"phase": "Failed", "initContainerStatuses": []any{
					map[string]any{"name": "init", "ready": false, "state": waiting},
				}}),
			},
			want: map[string]any{
				"phase":                 "Failed",
				"containerStatuses":     []any{map[string]any{"ready": true, "state": running}},
				"initContainerStatuses": []any{map[string]any{"ready": false, "state": waiting}},
			},
		},
		{
			name:     "a member not collected yet counts as Pending, before Running",
			template: makeObj("Pod").Obj(),
			items:    []interpret.Member{member("east", map[string]any{"phase": "Running"}), uncollected("west")},
			want:     map[string]any{"phase": "Pending"},
		},
		{
			name:     "Running before Succeeded",
			template: makeObj("Pod").Obj(),
			items:    []interpret.Member{member("east", map[string]any{"phase": "Succeeded"}), member("west", map[string]any{"phase": "Running"})},
			want:     map[string]any{"phase": "Running"},
		},
		{
			name:     "Succeeded everywhere",
			template: makeObj("Pod").Obj(),
			items:    []interpret.Member{member("east", map[string]any{"phase": "Succeeded"}), member("west", map[string]any{"phase": "Succeeded"})},
			want:     map[string]any{"phase": "Succeeded"},
		},
		{
			name:     "no members leaves the status alone",
			template: makeObj("Pod").Obj(),
			want:     nil,
		},
	})
}

// TestAggregatePersistentVolume follows Karmada's
// aggregatePersistentVolumeStatus.
func TestAggregatePersistentVolume(t *testing.T) {
	pv := func(items ...interpret.Member) aggregateCase {
		return aggregateCase{template: makeObj("PersistentVolume").Obj(), items: items}
	}
	phase := func(p string) map[string]any { return map[string]any{"phase": p} }
	cases := []aggregateCase{}
	for _, tc := range []struct {
		name  string
		items []interpret.Member
		want  string
	}{
		{"Failed first", []interpret.Member{member("a", phase("Bound")), member("b", phase("Failed")), member("c", phase("Pending"))}, "Failed"},
		{"not collected is Pending", []interpret.Member{member("a", phase("Available")), uncollected("b")}, "Pending"},
		{"Available before Bound", []interpret.Member{member("a", phase("Bound")), member("b", phase("Available"))}, "Available"},
		{"Bound before Released", []interpret.Member{member("a", phase("Released")), member("b", phase("Bound"))}, "Bound"},
		{"Released everywhere", []interpret.Member{member("a", phase("Released"))}, "Released"},
	} {
		c := pv(tc.items...)
		c.name, c.want = tc.name, phase(tc.want)
		cases = append(cases, c)
	}
	runAggregate(t, cases)
}

// TestAggregatePersistentVolumeClaim follows Karmada's
// aggregatePersistentVolumeClaimStatus.
func TestAggregatePersistentVolumeClaim(t *testing.T) {
	phase := func(p string) map[string]any { return map[string]any{"phase": p} }
	pvc := makeObj("PersistentVolumeClaim").Obj()
	runAggregate(t, []aggregateCase{
		{name: "Bound everywhere", template: pvc, items: []interpret.Member{member("a", phase("Bound")), member("b", phase("Bound"))}, want: phase("Bound")},
		{name: "a Pending member", template: pvc, items: []interpret.Member{member("a", phase("Bound")), member("b", phase("Pending"))}, want: phase("Pending")},
		{name: "Lost wins over a later Pending", template: pvc, items: []interpret.Member{member("a", phase("Lost")), member("b", phase("Pending"))}, want: phase("Lost")},
		{name: "members not collected are skipped", template: pvc, items: []interpret.Member{uncollected("a"), member("b", phase("Bound"))}, want: phase("Bound")},
	})
}

// TestAggregatePodDisruptionBudget follows Karmada's
// aggregatePodDisruptionBudgetStatus.
func TestAggregatePodDisruptionBudget(t *testing.T) {
	runAggregate(t, []aggregateCase{
		{
			name:     "counts summed, disrupted pods keyed by cluster",
			template: makeObj("PodDisruptionBudget").Obj(),
			items: []interpret.Member{
				member("east", map[string]any{"currentHealthy": int64(3), "desiredHealthy": int64(2), "expectedPods": int64(3), "disruptionsAllowed": int64(1),
					"disruptedPods": map[string]any{"web-1": "2026-01-01T10:00:00Z"}}),
				member("west", map[string]any{"currentHealthy": 1, "desiredHealthy": 2, "expectedPods": 2, "disruptionsAllowed": 0}),
				uncollected("south"),
			},
			want: map[string]any{"currentHealthy": int64(4), "desiredHealthy": int64(4), "expectedPods": int64(5), "disruptionsAllowed": int64(1),
				"disruptedPods": map[string]any{"east/web-1": "2026-01-01T10:00:00Z"}},
		},
	})
}

// TestAggregateHorizontalPodAutoscaler follows Karmada's
// aggregateHorizontalPodAutoscalerStatus.
func TestAggregateHorizontalPodAutoscaler(t *testing.T) {
	runAggregate(t, []aggregateCase{
		{
			name:     "current and desired replicas summed over the members",
			template: makeObj("HorizontalPodAutoscaler").Obj(),
			items: []interpret.Member{
				member("east", map[string]any{"currentReplicas": int64(3), "desiredReplicas": int64(5)}),
				member("west", map[string]any{"currentReplicas": int64(2), "desiredReplicas": int64(2)}),
				uncollected("south"),
			},
			want: map[string]any{"currentReplicas": int64(5), "desiredReplicas": int64(7)},
		},
	})
}

// TestAggregateUnknownKind: a kind outside the table has no aggregated
// status, as in Karmada.
func TestAggregateUnknownKind(t *testing.T) {
	runAggregate(t, []aggregateCase{
		{name: "ConfigMap", template: makeObj("ConfigMap").Obj(), items: []interpret.Member{member("east", map[string]any{"x": "y"})}, want: nil},
		{name: "no template", items: []interpret.Member{member("east", nil)}, want: nil},
	})
}
