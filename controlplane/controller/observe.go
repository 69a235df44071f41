package controller

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// The reconcilers' metrics (controlplane/metrics) and the events that go
// with them, kept here so each reconciler calls one line.

// The states flotilla_resource_bindings counts.
const (
	BindingStateUnscheduled   = "Unscheduled"
	BindingStateUnschedulable = "Unschedulable"
	BindingStateScheduled     = "Scheduled"
	BindingStateFullyApplied  = "FullyApplied"
)

// scheduleOutcome is the result label of a scheduling attempt that wrote
// its result.
func scheduleOutcome(err error) string {
	var fit *scheduler.FitError
	switch {
	case err == nil:
		return metrics.ResultScheduled
	case errors.As(err, &fit):
		return metrics.ResultUnschedulable
	}
	return metrics.ResultError
}

func observeSchedule(outcome string, start time.Time) {
	metrics.ScheduleAttempts.WithLabelValues(outcome).Inc()
	metrics.SchedulingDuration.WithLabelValues(outcome).Observe(metrics.Since(start))
}

// failedOver records the cluster failovers of a schedule just written:
// the clusters of prev the binding left for an untolerated NoExecute taint.
func (s *schedulerReconciler) failedOver(rb *workv1.ResourceBinding, prev []api.TargetCluster, clusters map[string]*api.Cluster, now time.Time) {
	var tolerations []corev1.Toleration
	if rb.Spec.Placement != nil {
		tolerations = rb.Spec.Placement.ClusterTolerations
	}
	left := clusterFailovers(prev, rb.Spec.Clusters, clusters, tolerations, now)
	names := make([]string, 0, len(left))
	for name := range left {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		metrics.Failovers.WithLabelValues(metrics.FailoverCluster, name).Inc()
		s.events.binding(rb, corev1.EventTypeWarning, EventReasonClusterFailover, actionFailover,
			fmt.Sprintf("left cluster %s, which has the untolerated taint %s; %s", name, left[name], placementNote(rb.Spec.Clusters)))
	}
}

// applicationFailedOver records the application failovers just written.
func (r *applicationFailoverReconciler) applicationFailedOver(rb *workv1.ResourceBinding, evicted []string, toleration time.Duration) {
	for _, name := range evicted {
		metrics.Failovers.WithLabelValues(metrics.FailoverApplication, name).Inc()
		r.events.binding(rb, corev1.EventTypeWarning, EventReasonApplicationFailover, actionFailover,
			fmt.Sprintf("left cluster %s, where the template stayed unhealthy for longer than %v", name, toleration))
	}
}

// evicted records the graceful eviction tasks that just ended.
func (b *bindingReconciler) evicted(rb *workv1.ResourceBinding, clusters []string) {
	for _, name := range clusters {
		metrics.Evictions.WithLabelValues(name).Inc()
		b.events.binding(rb, corev1.EventTypeNormal, EventReasonEvictWorkloadFromClusterSucceed, actionEvict,
			"the evicted copy on cluster "+name+" is removed")
	}
}

// observeApply records one pass of the execution controller over a Work:
// the latency of the apply when one ran, an error when it failed or the
// Work was refused, and an event when the Applied condition changes.
func (e *workExecution) observeApply(w *workv1.Work, cluster string, prev *metav1.Condition, cond metav1.Condition, took time.Duration) {
	result := metrics.ResultSuccess
	if cond.Status != metav1.ConditionTrue {
		result = metrics.ResultError
		// A member not ready is not tried, so it is no apply error.
		if took > 0 || cond.Reason == api.ReasonRefused {
			metrics.WorkApplyErrors.WithLabelValues(cluster).Inc()
		}
	}
	if took > 0 {
		metrics.WorkApplyDuration.WithLabelValues(cluster, result).Observe(took.Seconds())
	}
	if !conditionMoved(prev, cond) {
		return
	}
	if cond.Status == metav1.ConditionTrue {
		e.events.object(w, corev1.EventTypeNormal, EventReasonSyncSucceed, actionApply, cond.Message)
		return
	}
	e.events.object(w, corev1.EventTypeWarning, EventReasonSyncFailed, actionApply, cond.Reason+": "+cond.Message)
}

// observeProbeLatency records how long one probe of a member took.
func observeProbeLatency(cluster string, probeErr error, took time.Duration) {
	result := metrics.ResultSuccess
	if probeErr != nil {
		result = metrics.ResultError
	}
	metrics.ClusterProbeDuration.WithLabelValues(cluster, result).Observe(took.Seconds())
}

// observeProbe records what was written after a probe (cl; before is the
// Cluster as read): readiness, and events when Ready or flotilla's taints
// change.
func (r *clusterReconciler) observeProbe(cl, before *clusterv1.Cluster) {
	ready, was := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady), apimeta.FindStatusCondition(before.Status.Conditions, api.ClusterConditionReady)
	up := 0.0
	if ready != nil && ready.Status == metav1.ConditionTrue {
		up = 1
	}
	metrics.ClusterReady.WithLabelValues(cl.Name).Set(up)
	switch {
	case ready == nil || (was != nil && was.Status == ready.Status):
	case ready.Status == metav1.ConditionTrue:
		r.events.object(cl, corev1.EventTypeNormal, EventReasonClusterReady, actionProbe, "cluster "+cl.Name+" is ready")
	default:
		r.events.object(cl, corev1.EventTypeWarning, EventReasonClusterNotReady, actionProbe, ready.Reason+": "+ready.Message)
	}
	if now, then := ownTaints(cl.Spec.Taints), ownTaints(before.Spec.Taints); now != then {
		note := "cluster " + cl.Name + " has no not-ready or unreachable taint"
		if now != "" {
			note = "cluster " + cl.Name + " is tainted " + now
		}
		r.events.object(cl, corev1.EventTypeNormal, EventReasonTaintClusterSucceed, actionTaint, note)
	}
}

// ownTaints lists the not-ready and unreachable taints as key:effect.
func ownTaints(taints []corev1.Taint) string {
	var own []string
	for _, t := range taints {
		if t.Key == api.TaintClusterNotReady || t.Key == api.TaintClusterUnreachable {
			own = append(own, t.Key+":"+string(t.Effect))
		}
	}
	return strings.Join(own, ", ")
}

// forgetClusterMetrics drops a removed Cluster's series.
func forgetClusterMetrics(name string) {
	labels := map[string]string{"member_cluster": name}
	metrics.ClusterReady.DeletePartialMatch(labels)
	metrics.ClusterProbeDuration.DeletePartialMatch(labels)
	metrics.WorkApplyDuration.DeletePartialMatch(labels)
	metrics.WorkApplyErrors.DeletePartialMatch(labels)
}

// bindingState is the state flotilla_resource_bindings counts a binding in.
func bindingState(rb *workv1.ResourceBinding) string {
	sched := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
	switch {
	case sched == nil:
		return BindingStateUnscheduled
	case sched.Status != metav1.ConditionTrue:
		return BindingStateUnschedulable
	case apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionFullyApplied):
		return BindingStateFullyApplied
	}
	return BindingStateScheduled
}

// bindingCounter counts the bindings of both kinds per state from the
// manager's cache, once elected leader (a standby's cache holds no
// bindings and its count would be wrong).
func bindingCounter(c client.Reader, elected <-chan struct{}) metrics.BindingCounter {
	return func(ctx context.Context) (map[string]int, bool, error) {
		select {
		case <-elected:
		default:
			return nil, false, nil
		}
		all, err := listAllBindings(ctx, c)
		if err != nil {
			return nil, false, err
		}
		counts := map[string]int{BindingStateUnscheduled: 0, BindingStateUnschedulable: 0, BindingStateScheduled: 0, BindingStateFullyApplied: 0}
		for i := range all {
			counts[bindingState(&all[i])]++
		}
		return counts, true, nil
	}
}
