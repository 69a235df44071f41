package schedule

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// failedOver records the cluster failovers of a schedule just written:
// the clusters of prev the binding left for an untolerated NoExecute taint.
func (s *schedulerReconciler) failedOver(rb *workv1.ResourceBinding, prev []api.TargetCluster, clusters map[string]*api.Cluster, now time.Time) {
	var tolerations []corev1.Toleration
	if rb.Spec.Placement != nil {
		tolerations = rb.Spec.Placement.ClusterTolerations
	}
	left := shared.ClusterFailovers(prev, rb.Spec.Clusters, clusters, tolerations, now)
	names := make([]string, 0, len(left))
	for name := range left {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		metrics.Failovers.WithLabelValues(metrics.FailoverCluster, name).Inc()
		s.events.Binding(rb, corev1.EventTypeWarning, shared.EventReasonClusterFailover, shared.ActionFailover,
			fmt.Sprintf("left cluster %s, which has the untolerated taint %s; %s", name, left[name], placementNote(rb.Spec.Clusters)))
	}
}

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

// observeSchedule records one scheduling attempt and how long it took.
func observeSchedule(outcome string, start time.Time) {
	metrics.ScheduleAttempts.WithLabelValues(outcome).Inc()
	metrics.SchedulingDuration.WithLabelValues(outcome).Observe(metrics.Since(start))
}

// placementNote describes a schedule: "cluster a (2 replicas), cluster b".
func placementNote(clusters []api.TargetCluster) string {
	if len(clusters) == 0 {
		return "scheduled to no cluster"
	}
	parts := make([]string, len(clusters))
	for i, tc := range clusters {
		parts[i] = tc.Name
		if tc.Replicas > 0 {
			parts[i] = fmt.Sprintf("%s (%d replicas)", tc.Name, tc.Replicas)
		}
	}
	return "scheduled to " + strings.Join(parts, ", ")
}
