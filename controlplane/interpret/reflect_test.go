package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

func TestReflectStatus(t *testing.T) {
	lbIngress := []any{map[string]any{"ip": "203.0.113.7", "ports": []any{map[string]any{"port": 80, "protocol": "TCP"}}}}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want map[string]any
	}{
		{
			name: "Deployment: the replica counts and observedGeneration, not conditions",
			obj: makeDeployment(3).Observed().Status("replicas", 3, "updatedReplicas", 3, "readyReplicas", 2,
				"availableReplicas", 2, "unavailableReplicas", 1, "collisionCount", 1).
				Condition("Available", "True", "MinimumReplicasAvailable", "").Obj(),
			want: map[string]any{"replicas": int64(3), "updatedReplicas": int64(3), "readyReplicas": int64(2),
				"availableReplicas": int64(2), "unavailableReplicas": int64(1), "observedGeneration": int64(1)},
		},
		{
			name: "StatefulSet: the replica counts",
			obj: makeObj("StatefulSet").Status("replicas", 2, "currentReplicas", 2, "updatedReplicas", 2, "readyReplicas", 2,
				"availableReplicas", 2, "currentRevision", "web-5d", "observedGeneration", 4).Obj(),
			want: map[string]any{"replicas": int64(2), "currentReplicas": int64(2), "updatedReplicas": int64(2),
				"readyReplicas": int64(2), "availableReplicas": int64(2), "observedGeneration": int64(4)},
		},
		{
			name: "DaemonSet: the scheduling counts",
			obj: makeObj("DaemonSet").Status("currentNumberScheduled", 2, "desiredNumberScheduled", 2, "numberAvailable", 1,
				"numberMisscheduled", 0, "numberReady", 1, "updatedNumberScheduled", 2, "numberUnavailable", 1, "collisionCount", 3).Obj(),
			want: map[string]any{"currentNumberScheduled": int64(2), "desiredNumberScheduled": int64(2), "numberAvailable": int64(1),
				"numberMisscheduled": int64(0), "numberReady": int64(1), "updatedNumberScheduled": int64(2), "numberUnavailable": int64(1)},
		},
		{
			name: "Job: counts, conditions and times",
			obj: makeObj("Job").Status("succeeded", 1, "startTime", "2026-01-01T00:00:00Z", "completionTime", "2026-01-01T00:01:00Z",
				"uncountedTerminatedPods", map[string]any{}, "ready", 0).Condition("Complete", "True", "", "").Obj(),
			want: map[string]any{"succeeded": int64(1), "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:01:00Z",
				"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}},
		},
		{
			name: "PodDisruptionBudget: the budget counts",
			obj: makeObj("PodDisruptionBudget").Status("disruptionsAllowed", 1, "expectedPods", 3, "desiredHealthy", 2,
				"currentHealthy", 3, "observedGeneration", 1).Obj(),
			want: map[string]any{"disruptionsAllowed": int64(1), "expectedPods": int64(3), "desiredHealthy": int64(2), "currentHealthy": int64(3)},
		},
		{
			name: "HorizontalPodAutoscaler: current and desired replicas",
			obj: makeObj("HorizontalPodAutoscaler").Status("currentReplicas", 2, "desiredReplicas", 3, "lastScaleTime", "2026-01-01T00:00:00Z").
				Condition("AbleToScale", "True", "", "").Obj(),
			want: map[string]any{"currentReplicas": int64(2), "desiredReplicas": int64(3)},
		},
		{
			name: "LoadBalancer Service: the load balancer",
			obj:  makeObj("Service").Spec("type", "LoadBalancer").Status("loadBalancer.ingress", lbIngress).Obj(),
			want: map[string]any{"loadBalancer": map[string]any{"ingress": []any{
				map[string]any{"ip": "203.0.113.7", "ports": []any{map[string]any{"port": int64(80), "protocol": "TCP"}}},
			}}},
		},
		{
			name: "ClusterIP Service: nothing",
			obj:  makeObj("Service").Status("loadBalancer", map[string]any{}).Obj(),
			want: nil,
		},
		{
			name: "Ingress: the whole status",
			obj:  makeObj("Ingress").Status("loadBalancer.ingress", []any{map[string]any{"hostname": "web.example.com"}}).Obj(),
			want: map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": "web.example.com"}}}},
		},
		{
			name: "ReplicaSet: the whole status, as Karmada has no reflector for it",
			obj:  makeObj("ReplicaSet").Status("replicas", 2, "fullyLabeledReplicas", 2, "availableReplicas", 1).Obj(),
			want: map[string]any{"replicas": int64(2), "fullyLabeledReplicas": int64(2), "availableReplicas": int64(1)},
		},
		{
			name: "custom resource: the whole status",
			obj:  makeObjOf("example.com/v1", "Widget").Status("phase", "Ready", "size", 3).Obj(),
			want: map[string]any{"phase": "Ready", "size": int64(3)},
		},
		{
			name: "no status: nothing",
			obj:  makeObj("ConfigMap").Obj(),
			want: nil,
		},
		{
			name: "a Deployment whose status has none of the reflected fields: nothing",
			obj:  makeDeployment(1).Condition("Progressing", "True", "", "").Obj(),
			want: nil,
		},
		{
			name: "nil object: nothing",
			obj:  nil,
			want: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, interpret.ReflectStatus(tc.obj)); diff != "" {
				t.Errorf("ReflectStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReflectStatusCopies(t *testing.T) {
	obj := makeObjOf("example.com/v1", "Widget").Status("nested.list", []any{"a"}).Obj()
	got := interpret.ReflectStatus(obj)
	got["nested"].(map[string]any)["list"].([]any)[0] = "changed"
	if v, _, _ := unstructured.NestedSlice(obj.Object, "status", "nested", "list"); v[0] != "a" {
		t.Errorf("changing the reflected status changed the object: list is %v", v)
	}
}
