package failover_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestGracefulEvictionAndRebalance taints a reachable member NoExecute by
// hand, so the old copy can be watched: it stays until the replacement on
// the backup member is ready, then goes. With the taint gone the template
// stays on the backup member (stickiness) until a reschedule is requested on
// the binding, which brings it back to the preferred member.
func TestGracefulEvictionAndRebalance(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, memberClients, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	primary, backup := names[0], names[1]
	both := func() map[string]client.Client {
		return map[string]client.Client{primary: memberClients[primary], backup: memberClients[backup]}
	}

	controllertest.CreatePolicy(t, hub, primaryBackupPolicy(primary, backup))
	testkit.MustCreate(t, hub, controllertest.Deployment(4))
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: 4, backup: -1})
	controllertest.SetReady(t, memberClients[primary], 4)

	t.Log("graceful eviction: the primary member is tainted NoExecute by hand")
	setTaints(t, hub, primary, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: 4, backup: 4})
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	var rb workv1.ResourceBinding
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	if n := len(rb.Spec.GracefulEvictionTasks); n != 1 {
		t.Fatalf("graceful eviction tasks = %+v, want one", rb.Spec.GracefulEvictionTasks)
	}
	task := rb.Spec.GracefulEvictionTasks[0]
	if task.FromCluster != primary || task.Reason != shared.EvictionReasonTaintUntolerated || task.Producer != shared.EvictionProducerTaintManager ||
		task.Replicas == nil || *task.Replicas != 4 || task.CreationTimestamp == nil {
		t.Fatalf("graceful eviction task = %+v", task)
	}

	t.Log("the old copy stays while the replacement is not ready (three resyncs)")
	time.Sleep(3 * time.Second)
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: 4, backup: 4})

	t.Log("the replacement becomes ready: the old copy goes and the task is dropped")
	readyAt := time.Now()
	controllertest.SetReady(t, memberClients[backup], 4)
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: -1, backup: 4})
	pruned := time.Since(readyAt)
	testkit.Eventually(t, controllertest.Deadline, "no graceful eviction task", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.GracefulEvictionTasks) == 0, fmt.Sprintf("tasks %+v", rb.Spec.GracefulEvictionTasks)
	})
	t.Logf("graceful eviction: old copy removed %v after the replacement reported ready (resync 1s)", pruned.Round(10*time.Millisecond))

	t.Log("the taint goes: the template stays on the backup member")
	setTaints(t, hub, primary)
	time.Sleep(3 * time.Second)
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: -1, backup: 4})

	t.Log("rebalance: a reschedule request brings it back to the primary member")
	if err := hub.Get(ctx, rbKey, &rb); err != nil {
		t.Fatal(err)
	}
	orig := rb.DeepCopy()
	triggered := metav1.NewTime(time.Now())
	rb.Spec.RescheduleTriggeredAt = &triggered
	if err := hub.Patch(ctx, &rb, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	controllertest.WaitReplicas(t, both(), map[string]int32{primary: 4, backup: -1})
	t.Logf("rebalance: template back on %s and pruned from %s after %v", primary, backup, time.Since(start).Round(10*time.Millisecond))
	testkit.Eventually(t, controllertest.Deadline, "the request is served once", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		last := rb.Status.LastScheduledTime
		return last != nil && last.After(rb.Spec.RescheduleTriggeredAt.Time) && rb.Status.SchedulerObservedAffinityName == "primary" && len(rb.Spec.GracefulEvictionTasks) == 0,
			fmt.Sprintf("lastScheduledTime %v, triggered %v, affinity %q, tasks %d", last, rb.Spec.RescheduleTriggeredAt, rb.Status.SchedulerObservedAffinityName, len(rb.Spec.GracefulEvictionTasks))
	})
}

// setTaints replaces a Cluster's taints, as an operator would.
func setTaints(t *testing.T, hub client.Client, name string, taints ...corev1.Taint) {
	t.Helper()
	var cl clusterv1.Cluster
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: name}, &cl, func() { cl.Spec.Taints = taints })
}
