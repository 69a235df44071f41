package schedule

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// otherScheduler is the Scheduled condition of a binding left to another
// scheduler, or nil when flotilla's scheduler is the one named.
func otherScheduler(rb *workv1.ResourceBinding) *metav1.Condition {
	if !api.OtherScheduler(rb.Spec.SchedulerName) {
		return nil
	}
	return &metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionFalse, Reason: api.ReasonOtherScheduler, ObservedGeneration: rb.Generation,
		Message: fmt.Sprintf("the propagation policy names scheduler %q (spec.schedulerName); flotilla's scheduler is %q and leaves the binding to it",
			rb.Spec.SchedulerName, api.DefaultSchedulerName)}
}
