package shared

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// Karmada's values for the eviction tasks of a cluster that gets an
// untolerated NoExecute taint. Flotilla's scheduler reconciler plays
// Karmada's taint manager, so it signs the tasks with the same producer and
// a Karmada user reads the same binding.
const (
	EvictionReasonTaintUntolerated = "TaintUntolerated"
	EvictionProducerTaintManager   = "TaintManager"
)

// clusterPurgeMode is what happens to the copy left on a cluster the template
// fails over from: the policy's failover.cluster.purgeMode, Gracefully when
// unset (failover is on by default).
func clusterPurgeMode(f *api.FailoverBehavior) api.PurgeMode {
	if f == nil || f.Cluster == nil || f.Cluster.PurgeMode == "" {
		return api.PurgeModeGracefully
	}
	switch f.Cluster.PurgeMode {
	case api.PurgeModeImmediately:
		return api.PurgeModeDirectly
	case api.PurgeModeGraciously:
		return api.PurgeModeGracefully
	}
	return f.Cluster.PurgeMode
}

// untoleratedNoExecute is the NoExecute taint of c that evicts the
// template at now (untolerated, or its toleration's tolerationSeconds
// passed: scheduler.NoExecuteUntolerated), or nil.
func untoleratedNoExecute(c *api.Cluster, tolerations []corev1.Toleration, now time.Time) *corev1.Taint {
	t, _ := scheduler.NoExecuteUntolerated(c.Spec.Taints, tolerations, now)
	return t
}

// EvictionTasks is spec.gracefulEvictionTasks after a schedule moved the
// template from spec.clusters to next. A cluster left because of an
// untolerated NoExecute taint gets a task, so that its copy stays until the
// replacement is healthy; a cluster left for any other reason (a policy
// change, a reschedule, a deleted Cluster) gets none and is pruned at once,
// as in Karmada. With purgeMode Directly no task is made either, unless
// failover.cluster.statePreservation has rules: then the task carries the
// state the cluster last reported (status) to the new cluster, as Karmada's
// taint manager does, and the failover waits while that state cannot be
// read. Existing tasks are kept. The result is nil when there are no tasks.
func EvictionTasks(spec *api.ResourceBindingSpec, status []api.AggregatedStatusItem, next []api.TargetCluster, clusters map[string]*api.Cluster, now time.Time) ([]api.GracefulEvictionTask, error) {
	tasks := slices.Clone(spec.GracefulEvictionTasks)
	mode := clusterPurgeMode(spec.Failover)
	var preserve *api.StatePreservation
	if spec.Failover != nil && spec.Failover.Cluster != nil {
		preserve = spec.Failover.Cluster.StatePreservation
	}
	if mode == api.PurgeModeDirectly && (preserve == nil || len(preserve.Rules) == 0) {
		return tasks, nil
	}
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	before := make([]string, len(spec.Clusters))
	for i, tc := range spec.Clusters {
		before[i] = tc.Name
	}
	for _, prev := range spec.Clusters {
		if slices.ContainsFunc(next, func(tc api.TargetCluster) bool { return tc.Name == prev.Name }) ||
			slices.ContainsFunc(tasks, func(t api.GracefulEvictionTask) bool { return t.FromCluster == prev.Name }) {
			continue
		}
		c, ok := clusters[prev.Name]
		if !ok {
			continue
		}
		taint := untoleratedNoExecute(c, tolerations, now)
		if taint == nil {
			continue
		}
		preserved, err := PreservedLabelState(preserve, status, prev.Name)
		if err != nil {
			return nil, err
		}
		replicas, created := prev.Replicas, metav1.NewTime(now)
		tasks = append(tasks, api.GracefulEvictionTask{
			FromCluster:            prev.Name,
			PurgeMode:              mode,
			Replicas:               &replicas,
			Reason:                 EvictionReasonTaintUntolerated,
			Message:                fmt.Sprintf("cluster %s has the untolerated taint %s", prev.Name, taint.ToString()),
			Producer:               EvictionProducerTaintManager,
			ClustersBeforeFailover: slices.Clone(before),
			PreservedLabelState:    preserved,
			CreationTimestamp:      &created,
		})
	}
	if len(tasks) == 0 {
		return nil, nil
	}
	return tasks, nil
}

// AssessEvictions decides which eviction tasks are over, as Karmada's
// graceful eviction controller does. A task is over when suppressDeletion is
// false, when its grace period (gracePeriodSeconds, else timeout) has passed
// since it was created, or when the template is Healthy in every scheduled
// cluster. Unlike Karmada, an empty schedule is not "all healthy": with no
// replacement anywhere the old copy stays until the timeout. Suppressed
// tasks and tasks in purgeMode Never stay until a person removes them.
// A Directly task ends at once unless it carries preserved state.
//
// scheduled is spec.clusters and status the fresh per-cluster report. It
// returns the tasks that stay, the clusters whose task is over, and how long
// until the earliest remaining deadline (zero when none).
func AssessEvictions(tasks []api.GracefulEvictionTask, scheduled []api.TargetCluster, status []api.AggregatedStatusItem, now time.Time, timeout time.Duration) (kept []api.GracefulEvictionTask, done []string, wait time.Duration) {
	healthy := len(scheduled) > 0
	for _, tc := range scheduled {
		i := slices.IndexFunc(status, func(it api.AggregatedStatusItem) bool { return it.ClusterName == tc.Name })
		if i < 0 || !status[i].Applied || status[i].Health != api.ResourceHealthy {
			healthy = false
			break
		}
	}
	for _, task := range tasks {
		if s := task.SuppressDeletion; s != nil {
			if *s {
				kept = append(kept, task)
			} else {
				done = append(done, task.FromCluster)
			}
			continue
		}
		if task.PurgeMode == api.PurgeModeNever {
			kept = append(kept, task)
			continue
		}
		grace := timeout
		if task.GracePeriodSeconds != nil {
			grace = time.Duration(*task.GracePeriodSeconds) * time.Second
		}
		var created time.Time
		if task.CreationTimestamp != nil {
			created = task.CreationTimestamp.Time
		}
		left := created.Add(grace).Sub(now)
		// A Directly task ends at once, unless it carries preserved state:
		// that stays until the new copy is healthy or the grace period
		// ends, so the new cluster's object is rendered with it (Karmada
		// keeps every task that long).
		if left <= 0 || healthy || (!keepsCopy(task) && len(task.PreservedLabelState) == 0) {
			done = append(done, task.FromCluster)
			continue
		}
		kept = append(kept, task)
		if wait == 0 || left < wait {
			wait = left
		}
	}
	return kept, done, wait
}
