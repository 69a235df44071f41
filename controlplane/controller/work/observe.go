package work

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

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
	if !shared.ConditionMoved(prev, cond) {
		return
	}
	if cond.Status == metav1.ConditionTrue {
		e.events.Object(w, corev1.EventTypeNormal, shared.EventReasonSyncSucceed, shared.ActionApply, cond.Message)
		return
	}
	e.events.Object(w, corev1.EventTypeWarning, shared.EventReasonSyncFailed, shared.ActionApply, cond.Reason+": "+cond.Message)
}
