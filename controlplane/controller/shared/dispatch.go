package shared

import (
	"fmt"
	"slices"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// The policy fields that hold propagation back in continuous mode:
// suspension (Works written, not dispatched), schedulerName (left to
// another scheduler), dependentOverrides and schedulePriority (the binding
// waits for the override policies and the PriorityClass to exist).

// suspendDispatching is a Work's spec.suspendDispatching for cluster under
// the binding's suspension: true or unset, as Karmada writes it.
func suspendDispatching(s *api.BindingSuspension, cluster string) *bool {
	if s == nil || !api.DispatchSuspended(&s.Suspension, cluster) {
		return nil
	}
	return ptr.To(true)
}

// WorkSuspended reports whether a Work's dispatch is held back.
func WorkSuspended(w *workv1.Work) bool {
	return w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
}

// MergeSuspension is Karmada's MergePolicySuspension: the binding takes the
// policy's dispatch suspension and keeps its own scheduling suspension.
func MergeSuspension(have *api.BindingSuspension, from *api.Suspension) *api.BindingSuspension {
	var scheduling *bool
	if have != nil {
		scheduling = have.Scheduling
	}
	if from == nil && scheduling == nil {
		return nil
	}
	out := &api.BindingSuspension{Scheduling: scheduling}
	if from != nil {
		out.Suspension = *from.DeepCopy()
	}
	return out
}

// DispatchingCondition sets or removes the binding's Dispatching condition:
// False, naming the held-back clusters, while the suspension holds any of
// the scheduled ones back; absent otherwise.
func DispatchingCondition(conds *[]metav1.Condition, s *api.BindingSuspension, placed []string, generation int64, now time.Time) {
	var held []string
	for _, c := range placed {
		if suspendDispatching(s, c) != nil {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		apimeta.RemoveStatusCondition(conds, api.ConditionDispatching)
		return
	}
	apimeta.SetStatusCondition(conds, metav1.Condition{
		Type: api.ConditionDispatching, Status: metav1.ConditionFalse, Reason: api.ReasonSuspendDispatching, ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
		Message: fmt.Sprintf("the propagation policy suspends dispatching to cluster %s: the works are written and not applied until the suspension is lifted",
			strings.Join(held, ", ")),
	})
}

// WorkDispatchingCondition is the Work's Dispatching condition, as Karmada's
// execution controller sets it (updateWorkDispatchingConditionIfNeeded).
// A Work never held back gets none, so nothing changes for it.
func WorkDispatchingCondition(w *workv1.Work, now time.Time) {
	if !WorkSuspended(w) {
		if c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionDispatching); c != nil && c.Status != metav1.ConditionTrue {
			apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionTrue,
				Reason: api.ReasonDispatching, Message: "work is being dispatched to member clusters", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
		}
		return
	}
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionFalse,
		Reason: api.ReasonSuspendDispatching, Message: "work dispatching is in a suspended state", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// OtherScheduler is the Scheduled condition of a binding left to another
// scheduler, or nil when flotilla's scheduler is the one named.
func OtherScheduler(rb *workv1.ResourceBinding) *metav1.Condition {
	if !api.OtherScheduler(rb.Spec.SchedulerName) {
		return nil
	}
	return &metav1.Condition{Type: api.ConditionScheduled, Status: metav1.ConditionFalse, Reason: api.ReasonOtherScheduler, ObservedGeneration: rb.Generation,
		Message: fmt.Sprintf("the propagation policy names scheduler %q (spec.schedulerName); flotilla's scheduler is %q and leaves the binding to it",
			rb.Spec.SchedulerName, api.DefaultSchedulerName)}
}

// SuspendedHeld lists the placed clusters whose Work is held back and was
// not applied at its current generation.
func SuspendedHeld(placed []string, works map[string]*workv1.Work) []string {
	var out []string
	for _, c := range placed {
		if w := works[c]; w != nil && WorkSuspended(w) && !slices.Contains(out, c) {
			if a := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied); a == nil || a.ObservedGeneration != w.Generation {
				out = append(out, c)
			}
		}
	}
	return out
}
