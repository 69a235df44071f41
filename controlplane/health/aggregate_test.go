package health_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
)

// itemWrapper builds one member's ClusterStatus: applied and Healthy, its
// object at generation 1, observed, and rendered from template generation 1.
type itemWrapper struct {
	cs health.ClusterStatus
}

func makeItem(cluster string) *itemWrapper {
	return &itemWrapper{cs: health.ClusterStatus{
		Cluster: cluster, Applied: true, Health: health.Healthy, Message: "ok",
		Generation: 1, ObservedGeneration: 1, ResourceTemplateGeneration: 1,
	}}
}

// Unhealthy marks the object unhealthy with a message.
func (w *itemWrapper) Unhealthy(message string) *itemWrapper {
	w.cs.Health, w.cs.Message = health.Unhealthy, message
	return w
}

// Missing marks the object not applied, with an Unknown health.
func (w *itemWrapper) Missing(why string) *itemWrapper {
	w.cs.Applied, w.cs.AppliedMessage, w.cs.Health, w.cs.Message = false, why, health.Unknown, why
	return w
}

// Status sets the reflected status from key/value pairs.
func (w *itemWrapper) Status(pairs ...any) *itemWrapper {
	w.cs.Status = map[string]any{}
	for i := 0; i < len(pairs); i += 2 {
		w.cs.Status[pairs[i].(string)] = jsonValue(pairs[i+1])
	}
	return w
}

// Generations sets the member object's generation and observedGeneration and
// the template generation it was rendered from.
func (w *itemWrapper) Generations(generation, observed, template int64) *itemWrapper {
	w.cs.Generation, w.cs.ObservedGeneration, w.cs.ResourceTemplateGeneration = generation, observed, template
	return w
}

func (w *itemWrapper) Obj() health.ClusterStatus { return w.cs }

func items(ws ...*itemWrapper) []health.ClusterStatus {
	out := make([]health.ClusterStatus, len(ws))
	for i, w := range ws {
		out[i] = w.Obj()
	}
	return out
}

func TestAggregateHealth(t *testing.T) {
	cases := []struct {
		name  string
		items []health.ClusterStatus
		want  health.Health
	}{
		{"every member applied and healthy", items(makeItem("a"), makeItem("b")), health.Healthy},
		{"one unhealthy member", items(makeItem("a"), makeItem("b").Unhealthy("1/3 replicas available")), health.Unhealthy},
		{"one member without the object", items(makeItem("a"), makeItem("b").Missing("not found")), health.Unknown},
		{"unhealthy beats unknown", items(makeItem("a").Missing("unreachable: connection refused"), makeItem("b").Unhealthy("0/1 replicas available")), health.Unhealthy},
		{"an applied member of unknown health", items(makeItem("a"), func() *itemWrapper {
			w := makeItem("b")
			w.cs.Health = health.Unknown
			return w
		}()), health.Unknown},
		{"no members", nil, health.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := health.Aggregate(makeObj("ConfigMap").Obj(), tc.items).Health; got != tc.want {
				t.Errorf("Health = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAggregateSortsClustersAndReportsTheUnhealthy(t *testing.T) {
	agg := health.Aggregate(makeObj("ConfigMap").Obj(), items(
		makeItem("member3").Missing("not found"),
		makeItem("member1"),
		makeItem("member2").Unhealthy("1/3 replicas available"),
	))
	var order []string
	for _, c := range agg.Clusters {
		order = append(order, c.Cluster)
	}
	if diff := cmp.Diff([]string{"member1", "member2", "member3"}, order); diff != "" {
		t.Errorf("cluster order (-want +got):\n%s", diff)
	}
	if got, want := health.Summary(agg.NotHealthy()), "member2: 1/3 replicas available; member3: not found"; got != want {
		t.Errorf("Summary(NotHealthy()) = %q, want %q", got, want)
	}
	if agg.Status != nil {
		t.Errorf("a ConfigMap has no aggregated status, got %v", agg.Status)
	}
}

func TestAggregateWorkloadStatus(t *testing.T) {
	deployment := func(generation int64) *objWrapper { return makeDeployment(5).Generation(generation) }
	cases := []struct {
		name     string
		template *unstructured.Unstructured
		items    []health.ClusterStatus
		want     map[string]any
	}{
		{
			name:     "Deployment: sums, and observedGeneration once every member caught up",
			template: deployment(2).Obj(),
			items: items(
				makeItem("member1").Generations(3, 3, 2).Status("replicas", 2, "readyReplicas", 2, "updatedReplicas", 2, "availableReplicas", 2),
				makeItem("member2").Generations(1, 1, 2).Status("replicas", 3, "readyReplicas", 1, "updatedReplicas", 3,
					"availableReplicas", 1, "unavailableReplicas", 2),
			),
			want: map[string]any{"replicas": int64(5), "readyReplicas": int64(3), "updatedReplicas": int64(5),
				"availableReplicas": int64(3), "unavailableReplicas": int64(2), "observedGeneration": int64(2)},
		},
		{
			name:     "Deployment: a member still runs the previous template, so observedGeneration stays",
			template: deployment(3).Status("observedGeneration", 2).Obj(),
			items: items(
				makeItem("member1").Generations(4, 4, 3).Status("replicas", 2),
				makeItem("member2").Generations(2, 2, 2).Status("replicas", 3),
			),
			want: map[string]any{"replicas": int64(5), "readyReplicas": int64(0), "updatedReplicas": int64(0),
				"availableReplicas": int64(0), "unavailableReplicas": int64(0), "observedGeneration": int64(2)},
		},
		{
			name:     "Deployment: a member's controller has not observed its object yet, so observedGeneration stays",
			template: deployment(3).Status("observedGeneration", 2).Obj(),
			items: items(
				makeItem("member1").Generations(4, 4, 3).Status("replicas", 2),
				makeItem("member2").Generations(5, 4, 3).Status("replicas", 3),
			),
			want: map[string]any{"replicas": int64(5), "readyReplicas": int64(0), "updatedReplicas": int64(0),
				"availableReplicas": int64(0), "unavailableReplicas": int64(0), "observedGeneration": int64(2)},
		},
		{
			name:     "Deployment: a member without the object holds observedGeneration back, and adds nothing",
			template: deployment(1).Obj(),
			items: items(
				makeItem("member1").Status("replicas", 2, "readyReplicas", 2),
				makeItem("member2").Missing("not found"),
			),
			want: map[string]any{"replicas": int64(2), "readyReplicas": int64(2), "updatedReplicas": int64(0),
				"availableReplicas": int64(0), "unavailableReplicas": int64(0)},
		},
		{
			name:     "Deployment: a template without a generation (not stored in an apiserver) gets no observedGeneration",
			template: makeObj("Deployment").Obj(),
			items:    items(makeItem("member1").Generations(1, 1, 0).Status("replicas", 1)),
			want: map[string]any{"replicas": int64(1), "readyReplicas": int64(0), "updatedReplicas": int64(0),
				"availableReplicas": int64(0), "unavailableReplicas": int64(0)},
		},
		{
			name:     "StatefulSet: sums its own replica counts",
			template: makeObj("StatefulSet").Generation(1).Obj(),
			items: items(
				makeItem("member1").Status("replicas", 1, "readyReplicas", 1, "currentReplicas", 1, "updatedReplicas", 1, "availableReplicas", 1),
				makeItem("member2").Status("replicas", 2, "readyReplicas", 1, "currentReplicas", 2, "updatedReplicas", 2, "availableReplicas", 1),
			),
			want: map[string]any{"replicas": int64(3), "readyReplicas": int64(2), "currentReplicas": int64(3),
				"updatedReplicas": int64(3), "availableReplicas": int64(2), "observedGeneration": int64(1)},
		},
		{
			name:     "ReplicaSet: sums its own replica counts",
			template: makeObj("ReplicaSet").Generation(1).Obj(),
			items: items(
				makeItem("member1").Status("replicas", 2, "fullyLabeledReplicas", 2, "readyReplicas", 2, "availableReplicas", 2),
				makeItem("member2").Status("replicas", 1, "fullyLabeledReplicas", 1, "readyReplicas", 0, "availableReplicas", 0),
			),
			want: map[string]any{"replicas": int64(3), "fullyLabeledReplicas": int64(3), "readyReplicas": int64(2),
				"availableReplicas": int64(2), "observedGeneration": int64(1)},
		},
		{
			name:     "DaemonSet: sums the scheduling counts",
			template: makeObj("DaemonSet").Generation(1).Obj(),
			items: items(
				makeItem("member1").Status("currentNumberScheduled", 3, "desiredNumberScheduled", 3, "numberAvailable", 3,
					"numberMisscheduled", 0, "numberReady", 3, "updatedNumberScheduled", 3),
				makeItem("member2").Status("currentNumberScheduled", 2, "desiredNumberScheduled", 2, "numberAvailable", 1,
					"numberMisscheduled", 1, "numberReady", 1, "updatedNumberScheduled", 2, "numberUnavailable", 1),
			),
			want: map[string]any{"currentNumberScheduled": int64(5), "desiredNumberScheduled": int64(5), "numberAvailable": int64(4),
				"numberMisscheduled": int64(1), "numberReady": int64(4), "updatedNumberScheduled": int64(5),
				"numberUnavailable": int64(1), "observedGeneration": int64(1)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.Aggregate(tc.template, tc.items).Status); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateJobStatus(t *testing.T) {
	complete := func(at string) map[string]any {
		return map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": at}
	}
	cases := []struct {
		name  string
		items []health.ClusterStatus
		want  map[string]any
	}{
		{
			name: "complete everywhere: Complete, the earliest start and the latest completion",
			items: items(
				makeItem("member1").Status("succeeded", 2, "startTime", "2026-01-01T00:00:10Z",
					"completionTime", "2026-01-01T00:02:00Z", "conditions", []any{complete("2026-01-01T00:02:00Z")}),
				makeItem("member2").Status("succeeded", 1, "failed", 1, "startTime", "2026-01-01T00:00:05Z",
					"completionTime", "2026-01-01T00:03:00Z", "conditions", []any{complete("2026-01-01T00:03:00Z")}),
			),
			want: map[string]any{
				"active": int64(0), "succeeded": int64(3), "failed": int64(1),
				"startTime": "2026-01-01T00:00:05Z", "completionTime": "2026-01-01T00:03:00Z",
				"conditions": []any{map[string]any{"type": "Complete", "status": "True", "reason": "Completed",
					"message": "Job completed", "lastTransitionTime": "2026-01-01T00:03:00Z"}},
			},
		},
		{
			name: "failed in one member, running in another: Failed naming the member, no completion",
			items: items(
				makeItem("member1").Unhealthy("running").Status("active", 1, "startTime", "2026-01-01T00:00:00Z"),
				makeItem("member2").Unhealthy("failed").Status("failed", 6, "startTime", "2026-01-01T00:00:01Z",
					"conditions", []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
						"lastTransitionTime": "2026-01-01T00:05:00Z"}}),
			),
			want: map[string]any{
				"active": int64(1), "succeeded": int64(0), "failed": int64(6), "startTime": "2026-01-01T00:00:00Z",
				"conditions": []any{map[string]any{"type": "Failed", "status": "True", "reason": "JobFailed",
					"message": "Job failed in member clusters member2", "lastTransitionTime": "2026-01-01T00:05:00Z"}},
			},
		},
		{
			name: "complete in one member only: no Complete, no completionTime",
			items: items(
				makeItem("member1").Status("succeeded", 1, "completionTime", "2026-01-01T00:01:00Z",
					"conditions", []any{complete("2026-01-01T00:01:00Z")}),
				makeItem("member2").Missing("not found"),
			),
			want: map[string]any{"active": int64(0), "succeeded": int64(1), "failed": int64(0)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.Aggregate(makeObj("Job").Obj(), tc.items).Status); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateLoadBalancerStatus(t *testing.T) {
	lbStatus := func(entries ...any) map[string]any {
		return map[string]any{"ingress": entries}
	}
	members := items(
		makeItem("member2").Status("loadBalancer", lbStatus(map[string]any{"hostname": "lb.example.com"})),
		makeItem("member1").Status("loadBalancer", lbStatus(map[string]any{"ip": "203.0.113.7"}, map[string]any{"ip": "203.0.113.8"})),
		makeItem("member3").Unhealthy("waiting for load balancer ingress"),
	)
	concatenated := map[string]any{"loadBalancer": map[string]any{"ingress": []any{
		map[string]any{"ip": "203.0.113.7", "hostname": "member1"},
		map[string]any{"ip": "203.0.113.8", "hostname": "member1"},
		map[string]any{"hostname": "lb.example.com"},
	}}}
	cases := []struct {
		name     string
		template *unstructured.Unstructured
		items    []health.ClusterStatus
		want     map[string]any
	}{
		{
			name:     "LoadBalancer Service: ingresses in cluster order, IP entries named by their cluster",
			template: makeObj("Service").Spec("type", "LoadBalancer").Obj(),
			items:    members,
			want:     concatenated,
		},
		{
			name:     "Ingress: the same",
			template: makeObj("Ingress").Obj(),
			items:    members,
			want:     concatenated,
		},
		{
			name:     "LoadBalancer Service without any address yet",
			template: makeObj("Service").Spec("type", "LoadBalancer").Obj(),
			items:    items(makeItem("member1").Unhealthy("waiting for load balancer ingress")),
			want:     map[string]any{"loadBalancer": map[string]any{}},
		},
		{
			name:     "ClusterIP Service: nothing",
			template: makeObj("Service").Obj(),
			items:    items(makeItem("member1")),
			want:     nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.Aggregate(tc.template, tc.items).Status); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAggregateDoesNotChangeItsInputs(t *testing.T) {
	template := makeObj("Service").Spec("type", "LoadBalancer").Obj()
	before := template.DeepCopy()
	in := items(makeItem("b").Status("loadBalancer", map[string]any{"ingress": []any{map[string]any{"ip": "203.0.113.7"}}}), makeItem("a"))
	health.Aggregate(template, in)
	if diff := cmp.Diff(before.Object, template.Object); diff != "" {
		t.Errorf("template changed (-before +after):\n%s", diff)
	}
	if in[0].Cluster != "b" {
		t.Errorf("items were reordered in place: first is %s", in[0].Cluster)
	}
	entry := in[0].Status["loadBalancer"].(map[string]any)["ingress"].([]any)[0].(map[string]any)
	if _, ok := entry["hostname"]; ok {
		t.Errorf("the member's reflected ingress entry got a hostname: %v", entry)
	}
}

func TestObserve(t *testing.T) {
	cases := []struct {
		name string
		live *unstructured.Unstructured
		want health.ClusterStatus
	}{
		{
			name: "a live Deployment",
			live: makeDeployment(2).Generation(4).Status("observedGeneration", 3, "replicas", 2, "availableReplicas", 2, "updatedReplicas", 2).Obj(),
			want: health.ClusterStatus{
				Cluster: "member1", Applied: true, Health: health.Unhealthy,
				Message: "waiting for the controller to observe generation 4 (observed 3)",
				Status: map[string]any{"observedGeneration": int64(3), "replicas": int64(2), "availableReplicas": int64(2),
					"updatedReplicas": int64(2)},
				Generation: 4, ObservedGeneration: 3, ResourceTemplateGeneration: 7,
			},
		},
		{
			name: "no object",
			live: nil,
			want: health.ClusterStatus{
				Cluster: "member1", AppliedMessage: "not found", Health: health.Unknown, Message: "not found",
				ResourceTemplateGeneration: 7,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, health.Observe("member1", tc.live, 7)); diff != "" {
				t.Errorf("Observe (-want +got):\n%s", diff)
			}
		})
	}
}
