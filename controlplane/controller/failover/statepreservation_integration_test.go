package failover_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestApplicationFailoverStatePreservation: on application failover with
// purgeMode Directly, failover.application.statePreservation's JSONPath
// rules read the status the primary member reported and the Deployment
// created on the backup member carries the values as labels (Karmada's
// StatefulFailoverInjection); the old copy goes at once.
func TestApplicationFailoverStatePreservation(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, memberClients := env.Hub, env.Members
	ctx := t.Context()
	// The backup stays unhealthy, so the task, and with it the injection,
	// lasts until checked.
	pb := startPrimaryBackup(t, env, false, 3, &api.ApplicationFailoverBehavior{
		DecisionConditions: api.DecisionConditions{TolerationSeconds: ptr.To[int32](1)},
		PurgeMode:          api.PurgeModeDirectly,
		StatePreservation: &api.StatePreservation{Rules: []api.StatePreservationRule{
			{AliasLabelName: "failover.example.com/replicas", JSONPath: "{.replicas}"},
			{AliasLabelName: "failover.example.com/generation", JSONPath: "{.observedGeneration}"},
		}},
	})
	primary, backup, both, primaryHealthy, rbKey := pb.primary, pb.backup, pb.both, pb.primaryHealthy, pb.rbKey
	var rb workv1.ResourceBinding
	testkit.Eventually(t, controllertest.Deadline, "the primary reports Healthy", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return controllertest.HealthOf(&rb, primary) == api.ResourceHealthy, fmt.Sprintf("status %+v", rb.Status.AggregatedStatus)
	})
	var primaryDeployment appsv1.Deployment
	if err := memberClients[primary].Get(ctx, client.ObjectKey{Namespace: "default", Name: "web"}, &primaryDeployment); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"failover.example.com/replicas":   "3",
		"failover.example.com/generation": fmt.Sprint(primaryDeployment.Status.ObservedGeneration),
	}

	t.Log("the primary turns Unhealthy: failover to the backup with the primary's state")
	primaryHealthy.Store(false)
	fastPoll(t, "an eviction task with the preserved state", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		for _, task := range rb.Spec.GracefulEvictionTasks {
			if task.FromCluster == primary {
				return equality.Semantic.DeepEqual(task.PreservedLabelState, want), fmt.Sprintf("task %+v", task)
			}
		}
		return false, fmt.Sprintf("tasks %+v", rb.Spec.GracefulEvictionTasks)
	})
	waitLabels(t, memberClients[backup], "the backup's Deployment carries the preserved labels", want)
	t.Log("purgeMode Directly: the old copy goes without waiting for the backup")
	controllertest.WaitReplicas(t, both, map[string]int32{primary: -1, backup: 3})
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Spec.GracefulEvictionTasks) != 1 {
		t.Errorf("the task should last while the backup is unhealthy: %+v", rb.Spec.GracefulEvictionTasks)
	}
}

// waitLabels waits until Deployment default/web in a member carries every
// label of want.
func waitLabels(t *testing.T, c client.Client, what string, want map[string]string) {
	t.Helper()
	testkit.Eventually(t, controllertest.Deadline, what, func() (bool, string) {
		var d appsv1.Deployment
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		for k, v := range want {
			if d.Labels[k] != v {
				return false, fmt.Sprintf("labels %v", d.Labels)
			}
		}
		return true, ""
	})
}
