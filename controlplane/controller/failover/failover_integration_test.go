package failover_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/failover"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestApplicationFailover makes the template's Deployment Unhealthy on the
// primary member while the member itself stays Ready: after the toleration
// the binding gets an ApplicationFailure eviction task, the replicas come up
// on the backup member, and the old copy goes once the backup is healthy.
func TestApplicationFailover(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub := env.Hub
	ctx := t.Context()
	pb := startPrimaryBackup(t, env, true, 4, &api.ApplicationFailoverBehavior{
		DecisionConditions: api.DecisionConditions{TolerationSeconds: ptr.To[int32](2)},
		PurgeMode:          api.PurgeModeGracefully,
		GracePeriodSeconds: ptr.To[int32](60),
	})
	primary, backup, both, primaryHealthy, rbKey := pb.primary, pb.backup, pb.both, pb.primaryHealthy, pb.rbKey
	var rb workv1.ResourceBinding
	testkit.Eventually(t, controllertest.Deadline, "the primary reports Healthy", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return controllertest.HealthOf(&rb, primary) == api.ResourceHealthy && rb.Annotations[failover.AnnotationUnhealthySince] == "",
			fmt.Sprintf("status %+v, annotations %v", rb.Status.AggregatedStatus, rb.Annotations)
	})

	t.Log("the Deployment on the primary turns Unhealthy (0 of 4 replicas available)")
	start := time.Now()
	primaryHealthy.Store(false)
	var task *api.GracefulEvictionTask
	var recorded string
	fastPoll(t, "an ApplicationFailure eviction task for the primary", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		if v := rb.Annotations[failover.AnnotationUnhealthySince]; v != "" {
			recorded = v
		}
		for i := range rb.Spec.GracefulEvictionTasks {
			if rb.Spec.GracefulEvictionTasks[i].FromCluster == primary {
				task = rb.Spec.GracefulEvictionTasks[i].DeepCopy()
				return true, ""
			}
		}
		return false, fmt.Sprintf("clusters %v, tasks %+v, status %+v", rb.Spec.Clusters, rb.Spec.GracefulEvictionTasks, rb.Status.AggregatedStatus)
	})
	evicted := time.Since(start)
	if recorded == "" {
		t.Errorf("the unhealthy-since record never showed on the binding")
	}
	if task.Reason != failover.EvictionReasonApplicationFailure || task.Producer != failover.EvictionProducerApplicationFailover ||
		task.PurgeMode != api.PurgeModeGracefully || ptr.Deref(task.GracePeriodSeconds, 0) != 60 || ptr.Deref(task.Replicas, 0) != 4 ||
		task.CreationTimestamp == nil || !equality.Semantic.DeepEqual(task.ClustersBeforeFailover, []string{primary}) {
		t.Errorf("eviction task = %+v", *task)
	}
	if evicted < 2*time.Second {
		t.Errorf("evicted %v after the template turned unhealthy, before the 2s toleration", evicted)
	}

	controllertest.WaitReplicas(t, both, map[string]int32{backup: 4})
	placed := time.Since(start)
	controllertest.WaitReplicas(t, both, map[string]int32{primary: -1, backup: 4})
	pruned := time.Since(start)
	t.Logf("application failover: task after %v, 4 replicas on %s after %v, old copy on %s removed after %v (toleration 2s, resync 1s)",
		evicted.Round(10*time.Millisecond), backup, placed.Round(10*time.Millisecond), primary, pruned.Round(10*time.Millisecond))

	testkit.Eventually(t, controllertest.Deadline, "the task is over and the record is empty", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.GracefulEvictionTasks) == 0 && rb.Annotations[failover.AnnotationUnhealthySince] == "" && rb.Status.SchedulerObservedAffinityName == "backup",
			fmt.Sprintf("tasks %+v, annotations %v, affinity %q", rb.Spec.GracefulEvictionTasks, rb.Annotations, rb.Status.SchedulerObservedAffinityName)
	})
	t.Log("the template stays on the backup once the task is over")
	time.Sleep(3 * time.Second)
	controllertest.WaitReplicas(t, both, map[string]int32{primary: -1, backup: 4})
}

// fastPoll is poll at a 50 ms period, for states that may last only a
// resync or two.
func fastPoll(t *testing.T, what string, f func() (bool, string)) {
	t.Helper()
	testkit.EventuallyEvery(t, 50*time.Millisecond, controllertest.Deadline, what, f)
}

// primaryBackup is Deployment web placed on a primary member, with a backup
// member as the second affinity term and application failover between
// them. APIServerOnly members run no deployment controller: the test plays
// it on each member, with a switch for that member's health.
type primaryBackup struct {
	primary, backup               string
	both                          map[string]client.Client
	primaryHealthy, backupHealthy *atomic.Bool
	rbKey                         client.ObjectKey
}

// startPrimaryBackup creates the policy, with propagateDeps and the
// failover given, and the Deployment of replicas, and waits until all of
// them run on the primary.
func startPrimaryBackup(t *testing.T, env controllertest.Fleet, backupHealthy bool, replicas int32, failover *api.ApplicationFailoverBehavior) primaryBackup {
	t.Helper()
	pb := primaryBackup{primary: env.Names[0], backup: env.Names[1], primaryHealthy: &atomic.Bool{}, backupHealthy: &atomic.Bool{}}
	pb.both = map[string]client.Client{pb.primary: env.Members[pb.primary], pb.backup: env.Members[pb.backup]}
	pb.primaryHealthy.Store(true)
	pb.backupHealthy.Store(backupHealthy)
	controllertest.PlayDeploymentController(t, env.Members[pb.primary], pb.primaryHealthy)
	controllertest.PlayDeploymentController(t, env.Members[pb.backup], pb.backupHealthy)
	controllertest.CreatePolicy(t, env.Hub, primaryBackupPolicy(pb.primary, pb.backup).PropagateDeps().Failover(&api.FailoverBehavior{Application: failover}))
	testkit.MustCreate(t, env.Hub, controllertest.Deployment(replicas))
	controllertest.WaitReplicas(t, pb.both, map[string]int32{pb.primary: replicas, pb.backup: -1})
	pb.rbKey = client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	return pb
}

// primaryBackupPolicy starts PropagationPolicy default/web, which selects
// Deployment web and places it on primary, or on backup when the primary
// cannot take it (two cluster affinity terms).
func primaryBackupPolicy(primary, backup string) *apitest.PropagationPolicyWrapper {
	return apitest.MakePropagationPolicy("web", "default").SelectName("apps/v1", "Deployment", "web").
		AffinityTerm("primary", apitest.MakeAffinity().Names(primary).Obj()).
		AffinityTerm("backup", apitest.MakeAffinity().Names(backup).Obj())
}
