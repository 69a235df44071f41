package interpret_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

type rolloutVerdict struct {
	Done    bool
	Message string
}

func TestRolloutComplete(t *testing.T) {
	sts := func(replicas int) *objWrapper {
		return makeObj("StatefulSet").Generation(1).Spec("replicas", replicas).Observed()
	}
	ds := func() *objWrapper { return makeObj("DaemonSet").Generation(1).Observed() }
	// reported is a Deployment as a Work's manifest status carries it: the
	// member generation and the reflected status, no spec.
	reported := makeObj("Deployment").Generation(3)
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want rolloutVerdict
		// karmadaHealthy: InterpretHealth calls it Healthy, so the
		// gate's second rule is what holds it.
		karmadaHealthy bool
	}{
		{
			name:           "1 replica, the new surge pod broken: the old pod is available but the rollout is not complete",
			obj:            makeDeployment(1).Observed().Status("replicas", 2, "updatedReplicas", 1, "readyReplicas", 1, "availableReplicas", 1, "unavailableReplicas", 1).Obj(),
			want:           rolloutVerdict{false, "1 old replica(s) pending"},
			karmadaHealthy: true,
		},
		{
			name: "1 replica rolled out",
			obj:  makeDeployment(1).Observed().Status("replicas", 1, "updatedReplicas", 1, "availableReplicas", 1).Obj(),
			want: rolloutVerdict{true, "1 replica(s) rolled out"},
		},
		{
			name: "generation not observed",
			obj:  makeDeployment(3).Generation(2).Status("observedGeneration", 1, "replicas", 3, "updatedReplicas", 3, "availableReplicas", 3).Obj(),
			want: rolloutVerdict{false, "waiting for the controller to observe generation 2 (observed 1)"},
		},
		{
			name: "not every desired replica updated",
			obj:  makeDeployment(3).Observed().Status("replicas", 4, "updatedReplicas", 2, "availableReplicas", 3).Obj(),
			want: rolloutVerdict{false, "2/3 replicas updated"},
		},
		{
			name:           "updated, old replicas still terminating",
			obj:            makeDeployment(3).Observed().Status("replicas", 5, "updatedReplicas", 3, "availableReplicas", 3).Obj(),
			want:           rolloutVerdict{false, "2 old replica(s) pending"},
			karmadaHealthy: true,
		},
		{
			name: "updated replicas not all available",
			obj:  makeDeployment(3).Observed().Status("replicas", 3, "updatedReplicas", 3, "availableReplicas", 2).Obj(),
			want: rolloutVerdict{false, "2/3 updated replicas available"},
		},
		{
			name: "past its progress deadline",
			obj: makeDeployment(1).Observed().Status("replicas", 2, "updatedReplicas", 1, "availableReplicas", 1).
				Condition("Progressing", "False", "ProgressDeadlineExceeded", `ReplicaSet "web-7c" has timed out progressing.`).Obj(),
			want: rolloutVerdict{false, `progress deadline exceeded (ProgressDeadlineExceeded: ReplicaSet "web-7c" has timed out progressing.)`},
		},
		{
			name: "reported status without spec: the surge case still shows",
			obj:  reported.Status("observedGeneration", 3, "replicas", 2, "updatedReplicas", 1, "availableReplicas", 1).Obj(),
			want: rolloutVerdict{false, "1 old replica(s) pending"},
		},
		{
			name: "a malformed status is not guessed at",
			obj:  makeDeployment(1).Observed().Status("replicas", "two").Obj(),
			want: rolloutVerdict{false, "cannot interpret status: status.replicas is string, want an integer"},
		},
		{
			name: "StatefulSet with a replica not ready",
			obj: sts(3).Spec("updateStrategy.rollingUpdate.partition", 0).
				Status("replicas", 3, "readyReplicas", 2, "updatedReplicas", 3, "availableReplicas", 2).Obj(),
			want: rolloutVerdict{false, "2/3 replicas ready"},
		},
		{
			name: "StatefulSet partitioned rollout waits for the pods above the partition",
			obj: sts(3).Spec("updateStrategy.rollingUpdate.partition", 1).
				Status("replicas", 3, "readyReplicas", 3, "updatedReplicas", 1, "availableReplicas", 3).Obj(),
			want: rolloutVerdict{false, "1/2 replicas updated (partition 1)"},
		},
		{
			name: "StatefulSet partitioned rollout done",
			obj: sts(3).Spec("updateStrategy.rollingUpdate.partition", 1).
				Status("replicas", 3, "readyReplicas", 3, "updatedReplicas", 2, "availableReplicas", 3).Obj(),
			want:           rolloutVerdict{true, "2 replica(s) updated"},
			karmadaHealthy: true,
		},
		{
			name: "StatefulSet without a rolling update section waits for the update revision",
			obj:  sts(2).Status("replicas", 2, "readyReplicas", 2, "updatedReplicas", 1, "updateRevision", "web-2", "currentRevision", "web-1").Obj(),
			want: rolloutVerdict{false, "1 replica(s) at revision web-2, rolling update in progress"},
		},
		{
			name: "StatefulSet never observed",
			obj:  makeObj("StatefulSet").Spec("replicas", 1).Obj(),
			want: rolloutVerdict{false, "waiting for the controller to observe generation 0 (observed 0)"},
		},
		{
			name: "StatefulSet OnDelete has nothing to wait for",
			obj:  sts(2).Spec("updateStrategy.type", "OnDelete").Status("replicas", 2, "readyReplicas", 2, "updatedReplicas", 0, "availableReplicas", 2).Obj(),
			want: rolloutVerdict{true, "OnDelete update strategy: pods change when deleted"},
		},
		{
			name: "DaemonSet with pods not updated",
			obj:  ds().Status("desiredNumberScheduled", 3, "updatedNumberScheduled", 2, "numberAvailable", 3).Obj(),
			want: rolloutVerdict{false, "2/3 pods updated"},
		},
		{
			name: "DaemonSet with updated pods not available",
			obj:  ds().Status("desiredNumberScheduled", 3, "updatedNumberScheduled", 3, "numberAvailable", 2).Obj(),
			want: rolloutVerdict{false, "2/3 updated pods available"},
		},
		{
			name:           "DaemonSet rolled out",
			obj:            ds().Status("desiredNumberScheduled", 3, "updatedNumberScheduled", 3, "numberAvailable", 3).Obj(),
			want:           rolloutVerdict{true, "3 pod(s) rolled out"},
			karmadaHealthy: true,
		},
		{
			name: "a kind without a rollout is complete",
			obj:  makeObj("Service").Obj(),
			want: rolloutVerdict{true, ""},
		},
		{
			name: "no object",
			want: rolloutVerdict{true, ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done, msg := interpret.RolloutComplete(tc.obj)
			if diff := cmp.Diff(tc.want, rolloutVerdict{done, msg}); diff != "" {
				t.Errorf("RolloutComplete (-want +got):\n%s", diff)
			}
			if tc.karmadaHealthy {
				if h, why := interpret.InterpretHealth(tc.obj); h != interpret.Healthy {
					t.Errorf("the case relies on Karmada's rule calling it Healthy, got %s (%s)", h, why)
				}
			}
		})
	}
}
