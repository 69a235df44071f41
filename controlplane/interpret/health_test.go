package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

type verdict struct {
	Health  interpret.Health
	Message string
}

type interpretCase struct {
	name string
	obj  *unstructured.Unstructured
	want verdict
}

func runInterpret(t *testing.T, cases []interpretCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, msg := interpret.InterpretHealth(tc.obj)
			if diff := cmp.Diff(tc.want, verdict{h, msg}); diff != "" {
				t.Errorf("Interpret (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInterpretDeployment(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "every replica updated and available",
			obj:  makeDeployment(3).Generation(2).Observed().Status("updatedReplicas", 3, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Healthy, "3/3 replicas available"},
		},
		{
			name: "scaled to zero",
			obj:  makeDeployment(0).Observed().Obj(),
			want: verdict{interpret.Healthy, "0/0 replicas available"},
		},
		{
			name: "latest generation not observed: the status describes the old spec",
			obj:  makeDeployment(3).Generation(2).Status("observedGeneration", 1, "updatedReplicas", 3, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 2 (observed 1)"},
		},
		{
			name: "just created, no status yet",
			obj:  makeDeployment(3).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 1 (observed 0)"},
		},
		{
			name: "rollout has not updated every replica",
			obj:  makeDeployment(3).Observed().Status("updatedReplicas", 1, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Unhealthy, "1/3 replicas updated"},
		},
		{
			name: "updated replicas not all available",
			obj:  makeDeployment(3).Observed().Status("updatedReplicas", 3, "availableReplicas", 2).Obj(),
			want: verdict{interpret.Unhealthy, "2/3 replicas available"},
		},
		{
			name: "a stalled rollout says why",
			obj: makeDeployment(3).Observed().Status("updatedReplicas", 3, "availableReplicas", 1).
				Condition("Progressing", "False", "ProgressDeadlineExceeded", `ReplicaSet "web-7c" has timed out progressing.`).Obj(),
			want: verdict{interpret.Unhealthy, `1/3 replicas available (ProgressDeadlineExceeded: ReplicaSet "web-7c" has timed out progressing.)`},
		},
		{
			name: "a malformed status is not guessed at",
			obj:  makeDeployment(3).Observed().Status("updatedReplicas", 3, "availableReplicas", "three").Obj(),
			want: verdict{interpret.Unknown, "cannot interpret status: status.availableReplicas is string, want an integer"},
		},
		{
			name: "float64 numbers of a JSON-decoded object read as integers",
			obj:  makeDeployment(2).Observed().Status("updatedReplicas", 2.0, "availableReplicas", 2.0).Obj(),
			want: verdict{interpret.Healthy, "2/2 replicas available"},
		},
	})
}

func TestInterpretReplicaSet(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "every replica available",
			obj:  makeObj("ReplicaSet").Generation(1).Spec("replicas", 2).Observed().Status("availableReplicas", 2).Obj(),
			want: verdict{interpret.Healthy, "2/2 replicas available"},
		},
		{
			name: "replicas missing",
			obj:  makeObj("ReplicaSet").Generation(1).Spec("replicas", 2).Observed().Status("availableReplicas", 1).Obj(),
			want: verdict{interpret.Unhealthy, "1/2 replicas available"},
		},
		{
			name: "generation not observed",
			obj:  makeObj("ReplicaSet").Generation(3).Spec("replicas", 2).Status("observedGeneration", 2, "availableReplicas", 2).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 3 (observed 2)"},
		},
	})
}

func TestInterpretStatefulSet(t *testing.T) {
	sts := func(replicas int) *objWrapper {
		return makeObj("StatefulSet").Generation(1).Spec("replicas", replicas).Observed()
	}
	runInterpret(t, []interpretCase{
		{
			name: "every replica updated and available",
			obj:  sts(3).Status("updatedReplicas", 3, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Healthy, "3/3 replicas available"},
		},
		{
			name: "partitioned update done once the pods above the partition are updated",
			obj:  sts(3).Spec("updateStrategy.rollingUpdate.partition", 2).Status("updatedReplicas", 1, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Healthy, "3/3 replicas available"},
		},
		{
			name: "partitioned update not done",
			obj:  sts(3).Spec("updateStrategy.rollingUpdate.partition", 2).Status("updatedReplicas", 0, "availableReplicas", 3).Obj(),
			want: verdict{interpret.Unhealthy, "0/1 replicas updated"},
		},
		{
			name: "every pod must be available, updated or not",
			obj:  sts(3).Spec("updateStrategy.rollingUpdate.partition", 2).Status("updatedReplicas", 1, "availableReplicas", 2).Obj(),
			want: verdict{interpret.Unhealthy, "2/3 replicas available"},
		},
		{
			name: "generation not observed",
			obj:  makeObj("StatefulSet").Generation(2).Spec("replicas", 1).Status("observedGeneration", 1).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 2 (observed 1)"},
		},
	})
}

func TestInterpretDaemonSet(t *testing.T) {
	ds := func() *objWrapper { return makeObj("DaemonSet").Generation(1).Observed() }
	runInterpret(t, []interpretCase{
		{
			name: "runs updated and available everywhere",
			obj:  ds().Status("desiredNumberScheduled", 4, "updatedNumberScheduled", 4, "numberAvailable", 4).Obj(),
			want: verdict{interpret.Healthy, "4/4 pods available"},
		},
		{
			name: "not updated everywhere",
			obj:  ds().Status("desiredNumberScheduled", 4, "updatedNumberScheduled", 3, "numberAvailable", 4).Obj(),
			want: verdict{interpret.Unhealthy, "3/4 pods updated"},
		},
		{
			name: "updated pods not available",
			obj:  ds().Status("desiredNumberScheduled", 4, "updatedNumberScheduled", 4, "numberAvailable", 2).Obj(),
			want: verdict{interpret.Unhealthy, "2/4 pods available"},
		},
		{
			name: "generation not observed",
			obj:  makeObj("DaemonSet").Generation(2).Status("observedGeneration", 1).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 2 (observed 1)"},
		},
	})
}

func TestInterpretJob(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "complete",
			obj:  makeObj("Job").Status("succeeded", 3).Condition("Complete", "True", "", "").Obj(),
			want: verdict{interpret.Healthy, "complete: 3 succeeded"},
		},
		{
			name: "failed",
			obj: makeObj("Job").Status("failed", 7).
				Condition("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit").Obj(),
			want: verdict{interpret.Unhealthy, "failed: BackoffLimitExceeded: Job has reached the specified backoff limit"},
		},
		{
			name: "running towards a completion count",
			obj:  makeObj("Job").Spec("completions", 3).Status("active", 1, "succeeded", 1).Obj(),
			want: verdict{interpret.Unhealthy, "running: 1 active, 1/3 succeeded"},
		},
		{
			name: "running without a completion count",
			obj:  makeObj("Job").Status("active", 2).Obj(),
			want: verdict{interpret.Unhealthy, "running: 2 active, 0 succeeded"},
		},
		{
			name: "a false Complete condition is not completion",
			obj:  makeObj("Job").Status("active", 1).Condition("Complete", "False", "", "").Obj(),
			want: verdict{interpret.Unhealthy, "running: 1 active, 0 succeeded"},
		},
		{
			name: "suspended as asked",
			obj:  makeObj("Job").Spec("suspend", true).Obj(),
			want: verdict{interpret.Healthy, "suspended"},
		},
	})
}

func TestInterpretCronJob(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "scheduling",
			obj: makeObj("CronJob").Status("lastScheduleTime", "2026-01-02T03:04:00Z",
				"active", []any{map[string]any{"name": "web-1"}}).Obj(),
			want: verdict{interpret.Healthy, "1 active, last scheduled 2026-01-02T03:04:00Z"},
		},
		{
			name: "never scheduled yet",
			obj:  makeObj("CronJob").Obj(),
			want: verdict{interpret.Healthy, "0 active"},
		},
		{
			name: "suspended",
			obj:  makeObj("CronJob").Spec("suspend", true).Obj(),
			want: verdict{interpret.Healthy, "suspended"},
		},
	})
}

func TestInterpretPod(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "running and ready",
			obj:  makeObj("Pod").Status("phase", "Running").Condition("Ready", "True", "", "").Obj(),
			want: verdict{interpret.Healthy, "Running and ready"},
		},
		{
			name: "succeeded",
			obj:  makeObj("Pod").Status("phase", "Succeeded").Obj(),
			want: verdict{interpret.Healthy, "Succeeded"},
		},
		{
			name: "running but not ready",
			obj:  makeObj("Pod").Status("phase", "Running").Condition("Ready", "False", "ContainersNotReady", "").Obj(),
			want: verdict{interpret.Unhealthy, "Running, not ready"},
		},
		{
			name: "pending names the waiting containers' reasons",
			obj: makeObj("Pod").Status("phase", "Pending", "containerStatuses", []any{
				map[string]any{"name": "app", "state": map[string]any{"waiting": map[string]any{"reason": "ImagePullBackOff"}}},
				map[string]any{"name": "sidecar", "state": map[string]any{"running": map[string]any{}}},
			}).Obj(),
			want: verdict{interpret.Unhealthy, "Pending: app ImagePullBackOff"},
		},
		{
			name: "failed",
			obj:  makeObj("Pod").Status("phase", "Failed", "reason", "Evicted").Obj(),
			want: verdict{interpret.Unhealthy, "Failed: Evicted"},
		},
		{
			name: "no status yet",
			obj:  makeObj("Pod").Obj(),
			want: verdict{interpret.Unhealthy, "no phase yet"},
		},
	})
}

func TestInterpretServiceAndIngress(t *testing.T) {
	lb := func() *objWrapper { return makeObj("Service").Spec("type", "LoadBalancer") }
	runInterpret(t, []interpretCase{
		{
			name: "ClusterIP by default",
			obj:  makeObj("Service").Obj(),
			want: verdict{interpret.Healthy, "type ClusterIP"},
		},
		{
			name: "NodePort",
			obj:  makeObj("Service").Spec("type", "NodePort").Obj(),
			want: verdict{interpret.Healthy, "type NodePort"},
		},
		{
			name: "load balancer without ingress",
			obj:  lb().Obj(),
			want: verdict{interpret.Unhealthy, "waiting for load balancer ingress"},
		},
		{
			name: "load balancer ingress without an address",
			obj:  lb().Status("loadBalancer.ingress", []any{map[string]any{"ipMode": "VIP"}}).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for load balancer ingress"},
		},
		{
			name: "load balancer with an IP and a hostname",
			obj: lb().Status("loadBalancer.ingress", []any{
				map[string]any{"ip": "203.0.113.7"}, map[string]any{"hostname": "lb.example.com"},
			}).Obj(),
			want: verdict{interpret.Healthy, "load balancer at 203.0.113.7, lb.example.com"},
		},
		{
			name: "ingress without an address",
			obj:  makeObj("Ingress").Obj(),
			want: verdict{interpret.Unhealthy, "waiting for load balancer ingress"},
		},
		{
			name: "ingress with an address",
			obj:  makeObj("Ingress").Status("loadBalancer.ingress", []any{map[string]any{"hostname": "web.example.com"}}).Obj(),
			want: verdict{interpret.Healthy, "load balancer at web.example.com"},
		},
	})
}

func TestInterpretStorage(t *testing.T) {
	runInterpret(t, []interpretCase{
		{name: "volume bound", obj: makeObj("PersistentVolume").Status("phase", "Bound").Obj(), want: verdict{interpret.Healthy, "Bound"}},
		{name: "volume available", obj: makeObj("PersistentVolume").Status("phase", "Available").Obj(), want: verdict{interpret.Healthy, "Available"}},
		{name: "volume released", obj: makeObj("PersistentVolume").Status("phase", "Released").Obj(), want: verdict{interpret.Unhealthy, "Released"}},
		{name: "volume without phase", obj: makeObj("PersistentVolume").Obj(), want: verdict{interpret.Unhealthy, "no phase yet"}},
		{name: "claim bound", obj: makeObj("PersistentVolumeClaim").Status("phase", "Bound").Obj(), want: verdict{interpret.Healthy, "Bound"}},
		{name: "claim pending", obj: makeObj("PersistentVolumeClaim").Status("phase", "Pending").Obj(), want: verdict{interpret.Unhealthy, "Pending"}},
	})
}

func TestInterpretPodDisruptionBudget(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "enough healthy pods",
			obj:  makeObj("PodDisruptionBudget").Status("currentHealthy", 3, "desiredHealthy", 2).Obj(),
			want: verdict{interpret.Healthy, "3/2 desired pods healthy"},
		},
		{
			name: "too few healthy pods",
			obj:  makeObj("PodDisruptionBudget").Status("currentHealthy", 1, "desiredHealthy", 2).Obj(),
			want: verdict{interpret.Unhealthy, "1/2 desired pods healthy"},
		},
	})
}

func TestInterpretHorizontalPodAutoscaler(t *testing.T) {
	hpa := func() *objWrapper { return makeObj("HorizontalPodAutoscaler").Generation(1).Observed() }
	runInterpret(t, []interpretCase{
		{
			name: "at the desired count",
			obj: hpa().Status("currentReplicas", 3, "desiredReplicas", 3).
				Condition("AbleToScale", "True", "ReadyForNewScale", "").Condition("ScalingActive", "True", "ValidMetricFound", "").Obj(),
			want: verdict{interpret.Healthy, "3 replicas, as desired"},
		},
		{
			name: "scaling",
			obj:  hpa().Status("currentReplicas", 2, "desiredReplicas", 4).Obj(),
			want: verdict{interpret.Unhealthy, "scaling from 2 to 4 replicas"},
		},
		{
			name: "cannot scale its target",
			obj: hpa().Status("currentReplicas", 2, "desiredReplicas", 2).
				Condition("AbleToScale", "False", "FailedGetScale", `deployments/scale.apps "web" not found`).Obj(),
			want: verdict{interpret.Unhealthy, `unable to scale: FailedGetScale: deployments/scale.apps "web" not found`},
		},
		{
			name: "metrics missing",
			obj: hpa().Status("currentReplicas", 2, "desiredReplicas", 2).
				Condition("ScalingActive", "False", "FailedGetResourceMetric", "no metrics returned").Obj(),
			want: verdict{interpret.Unhealthy, "scaling inactive: FailedGetResourceMetric: no metrics returned"},
		},
		{
			name: "scaling disabled by a zero-replica target is as asked",
			obj: hpa().Status("currentReplicas", 0, "desiredReplicas", 0).
				Condition("ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero").Obj(),
			want: verdict{interpret.Healthy, "0 replicas, as desired"},
		},
		{
			name: "not observed yet",
			obj:  makeObj("HorizontalPodAutoscaler").Generation(1).Status("currentReplicas", 0, "desiredReplicas", 0).Obj(),
			want: verdict{interpret.Unhealthy, "waiting for the controller to observe generation 1 (observed 0)"},
		},
		{
			name: "autoscaling/v1 is judged by the same rule",
			obj:  makeObjOf("autoscaling/v1", "HorizontalPodAutoscaler").Status("currentReplicas", 1, "desiredReplicas", 2).Obj(),
			want: verdict{interpret.Unhealthy, "scaling from 1 to 2 replicas"},
		},
	})
}

func TestInterpretOtherKinds(t *testing.T) {
	runInterpret(t, []interpretCase{
		{
			name: "a kind without a rule is healthy once it exists",
			obj:  makeObj("ConfigMap").Obj(),
			want: verdict{interpret.Healthy, "exists"},
		},
		{
			name: "a custom resource with a failing status is still healthy: flotilla has no rule for it",
			obj:  makeObjOf("example.com/v1", "Widget").Status("phase", "Failed").Obj(),
			want: verdict{interpret.Healthy, "exists"},
		},
		{
			name: "a Deployment of another group is not an apps Deployment",
			obj:  makeObjOf("example.com/v1", "Deployment").Obj(),
			want: verdict{interpret.Healthy, "exists"},
		},
		{
			name: "nothing read",
			obj:  nil,
			want: verdict{interpret.Unknown, "not found"},
		},
	})
}
