package shared

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
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

// ScheduleOutcome is the result label of a scheduling attempt that wrote
// its result.
func ScheduleOutcome(err error) string {
	var fit *scheduler.FitError
	switch {
	case err == nil:
		return metrics.ResultScheduled
	case errors.As(err, &fit):
		return metrics.ResultUnschedulable
	}
	return metrics.ResultError
}

// ObserveSchedule records one scheduling attempt and how long it took.
func ObserveSchedule(outcome string, start time.Time) {
	metrics.ScheduleAttempts.WithLabelValues(outcome).Inc()
	metrics.SchedulingDuration.WithLabelValues(outcome).Observe(metrics.Since(start))
}

// ObserveProbeLatency records how long one probe of a member took.
func ObserveProbeLatency(cluster string, probeErr error, took time.Duration) {
	result := metrics.ResultSuccess
	if probeErr != nil {
		result = metrics.ResultError
	}
	metrics.ClusterProbeDuration.WithLabelValues(cluster, result).Observe(took.Seconds())
}

// OwnTaints lists the not-ready and unreachable taints as key:effect.
func OwnTaints(taints []corev1.Taint) string {
	var own []string
	for _, t := range taints {
		if t.Key == api.TaintClusterNotReady || t.Key == api.TaintClusterUnreachable {
			own = append(own, t.Key+":"+string(t.Effect))
		}
	}
	return strings.Join(own, ", ")
}

// ForgetClusterMetrics drops a removed Cluster's series.
func ForgetClusterMetrics(name string) {
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

// BindingCounter counts the bindings of both kinds per state from the
// manager's cache, once elected leader (a standby's cache holds no
// bindings and its count would be wrong).
func BindingCounter(c client.Reader, elected <-chan struct{}) metrics.BindingCounter {
	return func(ctx context.Context) (map[string]int, bool, error) {
		select {
		case <-elected:
		default:
			return nil, false, nil
		}
		all, err := ListAllBindings(ctx, c)
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
