package clusterstatus

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

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
		r.events.Object(cl, corev1.EventTypeNormal, shared.EventReasonClusterReady, shared.ActionProbe, "cluster "+cl.Name+" is ready")
	default:
		r.events.Object(cl, corev1.EventTypeWarning, shared.EventReasonClusterNotReady, shared.ActionProbe, ready.Reason+": "+ready.Message)
	}
	if now, then := ownTaints(cl.Spec.Taints), ownTaints(before.Spec.Taints); now != then {
		note := "cluster " + cl.Name + " has no not-ready or unreachable taint"
		if now != "" {
			note = "cluster " + cl.Name + " is tainted " + now
		}
		r.events.Object(cl, corev1.EventTypeNormal, shared.EventReasonTaintClusterSucceed, shared.ActionTaint, note)
	}
}

// observeProbeLatency records how long one probe of a member took.
func observeProbeLatency(cluster string, probeErr error, took time.Duration) {
	result := metrics.ResultSuccess
	if probeErr != nil {
		result = metrics.ResultError
	}
	metrics.ClusterProbeDuration.WithLabelValues(cluster, result).Observe(took.Seconds())
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
	metrics.MCSSyncErrors.DeletePartialMatch(labels)
}
