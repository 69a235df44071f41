package work

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// workDispatchingCondition is the Work's Dispatching condition, as Karmada's
// execution controller sets it (updateWorkDispatchingConditionIfNeeded).
// A Work never held back gets none, so nothing changes for it.
func workDispatchingCondition(w *workv1.Work, now time.Time) {
	if !shared.WorkSuspended(w) {
		if c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionDispatching); c != nil && c.Status != metav1.ConditionTrue {
			apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionTrue,
				Reason: api.ReasonDispatching, Message: "work is being dispatched to member clusters", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
		}
		return
	}
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionFalse,
		Reason: api.ReasonSuspendDispatching, Message: "work dispatching is in a suspended state", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
}
