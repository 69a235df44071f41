package failover_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestClusterFailoverStatePreservation stops the primary member's
// apiserver: the control plane marks it NotReady and taints it NoExecute,
// the taint manager's eviction task carries the state the primary last
// reported (failover.cluster.statePreservation, Karmada's
// StatefulFailoverInjection for cluster failover) although its Work is no
// longer applied, and the Deployment created on the backup member carries
// it as labels (purgeMode Directly: Karmada injects the state in that mode
// only). When the primary comes back its old copy is removed, the task
// ends once the backup is healthy and the template stays on the backup.
func TestClusterFailoverStatePreservation(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, memberClients, names := env.Hub, env.Members, env.Names
	ctx := t.Context()
	primary, backup := names[0], names[1]
	both := map[string]client.Client{primary: memberClients[primary], backup: memberClients[backup]}
	primaryHealthy, backupHealthy := &atomic.Bool{}, &atomic.Bool{}
	primaryHealthy.Store(true)
	backupHealthy.Store(false) // so the task, and with it the injection, lasts until checked
	controllertest.PlayDeploymentController(t, memberClients[primary], primaryHealthy)
	controllertest.PlayDeploymentController(t, memberClients[backup], backupHealthy)

	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinities:
    - {affinityName: primary, clusterNames: [%s]}
    - {affinityName: backup, clusterNames: [%s]}
  failover:
    cluster:
      purgeMode: Directly
      statePreservation:
        rules:
        - {aliasLabelName: failover.example.com/replicas, jsonPath: "{.replicas}"}
        - {aliasLabelName: failover.example.com/ready, jsonPath: "{.readyReplicas}"}
`, primary, backup)
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, controllertest.Deployment(3))
	controllertest.WaitReplicas(t, both, map[string]int32{primary: 3, backup: -1})
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web")}
	var rb workv1.ResourceBinding
	testkit.Eventually(t, controllertest.Deadline, "the primary reports 3 ready replicas", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return controllertest.HealthOf(&rb, primary) == api.ResourceHealthy, fmt.Sprintf("status %+v", rb.Status.AggregatedStatus)
	})
	want := map[string]string{"failover.example.com/replicas": "3", "failover.example.com/ready": "3"}

	t.Log("the primary's apiserver stops: NotReady, NoExecute, failover with the primary's last state")
	start := time.Now()
	env.Clusters[0].StopAPIServer()
	testkit.Eventually(t, controllertest.Deadline, "the primary NotReady and tainted NoExecute", func() (bool, string) {
		var cl clusterv1.Cluster
		if err := hub.Get(ctx, client.ObjectKey{Name: primary}, &cl); err != nil {
			return false, err.Error()
		}
		tainted := slices.ContainsFunc(cl.Spec.Taints, func(t corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute })
		return apimeta.IsStatusConditionFalse(cl.Status.Conditions, api.ClusterConditionReady) && tainted, fmt.Sprintf("taints %v", cl.Spec.Taints)
	})
	testkit.Eventually(t, controllertest.Deadline, "a TaintUntolerated task with the preserved state", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		for _, task := range rb.Spec.GracefulEvictionTasks {
			if task.FromCluster == primary {
				ok := task.Reason == shared.EvictionReasonTaintUntolerated && task.Producer == shared.EvictionProducerTaintManager &&
					task.PurgeMode == api.PurgeModeDirectly && equality.Semantic.DeepEqual(task.PreservedLabelState, want)
				return ok, fmt.Sprintf("task %+v", task)
			}
		}
		return false, fmt.Sprintf("clusters %v, conditions %+v, status %+v", rb.Spec.Clusters, rb.Status.Conditions, rb.Status.AggregatedStatus)
	})
	waitLabels(t, memberClients[backup], "the backup's Deployment carries the primary's state", want)
	t.Logf("cluster failover: the backup runs the template with the preserved state %v after the primary stopped", time.Since(start).Round(10*time.Millisecond))

	t.Log("the primary comes back and the backup turns healthy: the old copy goes, the task ends, the template stays on the backup")
	if err := env.Clusters[0].StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	backupHealthy.Store(true)
	controllertest.WaitReplicas(t, both, map[string]int32{primary: -1, backup: 3})
	testkit.Eventually(t, controllertest.Deadline, "the eviction task is over", func() (bool, string) {
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		return len(rb.Spec.GracefulEvictionTasks) == 0 && len(rb.Spec.Clusters) == 1 && rb.Spec.Clusters[0].Name == backup,
			fmt.Sprintf("clusters %v, tasks %+v", rb.Spec.Clusters, rb.Spec.GracefulEvictionTasks)
	})
}

// TestClusterResourceBindingFailover: a ClusterRole claimed by a
// ClusterPropagationPolicy that spreads it to exactly one cluster moves
// when that cluster is tainted NoExecute; its ClusterResourceBinding gets
// the taint manager's eviction task, the old copy stays while the new one
// cannot be applied (a ClusterRole flotilla does not own is in the way),
// and once the new one is applied and healthy (purgeMode Gracefully) the
// old copy is removed and the task ends.
func TestClusterResourceBindingFailover(t *testing.T) {
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
	ctx := t.Context()

	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: "flotilla:reader"}
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
    spreadConstraints:
    - {spreadByField: cluster, minGroups: 1, maxGroups: 1}
  failover:
    cluster: {purgeMode: Gracefully}
`, names[0], names[1])
	testkit.MustCreate(t, hub, cpp)
	testkit.MustCreate(t, hub, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla:reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	})
	key := client.ObjectKey{Name: "flotilla.reader-clusterrole.rbac.authorization.k8s.io"}
	var crb workv1.ClusterResourceBinding
	testkit.Eventually(t, controllertest.Deadline, "the ClusterRole placed on one cluster and applied", func() (bool, string) {
		if err := hub.Get(ctx, key, &crb); err != nil {
			return false, err.Error()
		}
		return len(crb.Spec.Clusters) == 1 && apimeta.IsStatusConditionTrue(crb.Status.Conditions, api.ConditionFullyApplied),
			fmt.Sprintf("clusters %v, conditions %+v", crb.Spec.Clusters, crb.Status.Conditions)
	})
	from := crb.Spec.Clusters[0].Name
	to := names[0]
	if from == to {
		to = names[1]
	}
	controllertest.WaitObject(t, members[from], from, &rbacv1.ClusterRole{}, "flotilla:reader")
	controllertest.AbsentFor(t, members[to], &rbacv1.ClusterRole{}, client.ObjectKey{Name: "flotilla:reader"}, time.Second)
	// A ClusterRole of the same name that flotilla does not own holds the
	// new copy back (conflict resolution Abort), so the eviction can be
	// watched while it waits.
	testkit.MustCreate(t, members[to], &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flotilla:reader", Labels: map[string]string{"owner": "someone-else"}}})

	t.Logf("%s is tainted NoExecute: the ClusterRole moves to %s", from, to)
	setTaints(t, hub, from, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
	testkit.Eventually(t, controllertest.Deadline, "the binding moved with an eviction task for "+from, func() (bool, string) {
		if err := hub.Get(ctx, key, &crb); err != nil {
			return false, err.Error()
		}
		moved := len(crb.Spec.Clusters) == 1 && crb.Spec.Clusters[0].Name == to
		tasked := slices.ContainsFunc(crb.Spec.GracefulEvictionTasks, func(task api.GracefulEvictionTask) bool {
			return task.FromCluster == from && task.Reason == shared.EvictionReasonTaintUntolerated && task.PurgeMode == api.PurgeModeGracefully
		})
		return moved && tasked, fmt.Sprintf("clusters %v, tasks %+v", crb.Spec.Clusters, crb.Spec.GracefulEvictionTasks)
	})
	t.Log("the new copy cannot be applied yet: the old one stays (three resyncs)")
	time.Sleep(3 * time.Second)
	controllertest.WaitObject(t, members[from], from, &rbacv1.ClusterRole{}, "flotilla:reader")
	if err := hub.Get(ctx, key, &crb); err != nil || len(crb.Spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("binding %v, tasks %+v: want the eviction task to last while the new copy is not applied", err, crb.Spec.GracefulEvictionTasks)
	}
	if err := members[to].Delete(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "flotilla:reader"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "flotilla's ClusterRole in "+to, func() (bool, string) {
		var role rbacv1.ClusterRole
		err := members[to].Get(ctx, client.ObjectKey{Name: "flotilla:reader"}, &role)
		return err == nil && role.Labels["owner"] == "" && len(role.Rules) == 1, fmt.Sprintf("%v, labels %v", err, role.Labels)
	})
	t.Log("the new copy is applied and healthy: the old one is removed, the task is over")
	controllertest.WaitGone(t, members[from], &rbacv1.ClusterRole{}, "flotilla:reader")
	testkit.Eventually(t, controllertest.Deadline, "no eviction task, fully applied on "+to, func() (bool, string) {
		if err := hub.Get(ctx, key, &crb); err != nil {
			return false, err.Error()
		}
		return len(crb.Spec.GracefulEvictionTasks) == 0 && apimeta.IsStatusConditionTrue(crb.Status.Conditions, api.ConditionFullyApplied) &&
				len(crb.Status.AggregatedStatus) == 1 && crb.Status.AggregatedStatus[0].ClusterName == to,
			fmt.Sprintf("tasks %+v, status %+v", crb.Spec.GracefulEvictionTasks, crb.Status)
	})
}
