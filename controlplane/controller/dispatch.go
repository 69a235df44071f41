package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// The policy fields that hold propagation back in continuous mode:
// suspension (Works written, not dispatched), schedulerName (left to
// another scheduler), dependentOverrides and schedulePriority (the binding
// waits for the override policies and the PriorityClass to exist).

// waitRetry is how soon a template waiting for an override policy or a
// PriorityClass is looked at again; a created override policy brings it back
// at once (the detector watches them).
const waitRetry = 30 * time.Second

// suspendDispatching is a Work's spec.suspendDispatching for cluster under
// the binding's suspension: true or unset, as Karmada writes it.
func suspendDispatching(s *api.BindingSuspension, cluster string) *bool {
	if s == nil || !api.DispatchSuspended(&s.Suspension, cluster) {
		return nil
	}
	return ptr.To(true)
}

// workSuspended reports whether a Work's dispatch is held back.
func workSuspended(w *workv1.Work) bool {
	return w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
}

// mergeSuspension is Karmada's MergePolicySuspension: the binding takes the
// policy's dispatch suspension and keeps its own scheduling suspension.
func mergeSuspension(have *api.BindingSuspension, from *api.Suspension) *api.BindingSuspension {
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

// dispatchingCondition sets or removes the binding's Dispatching condition:
// False, naming the held-back clusters, while the suspension holds any of
// the scheduled ones back; absent otherwise.
func dispatchingCondition(conds *[]metav1.Condition, s *api.BindingSuspension, placed []string, generation int64, now time.Time) {
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

// workDispatchingCondition is the Work's Dispatching condition, as Karmada's
// execution controller sets it (updateWorkDispatchingConditionIfNeeded).
// A Work never held back gets none, so nothing changes for it.
func workDispatchingCondition(w *workv1.Work, now time.Time) {
	if !workSuspended(w) {
		if c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionDispatching); c != nil && c.Status != metav1.ConditionTrue {
			apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionTrue,
				Reason: api.ReasonDispatching, Message: "work is being dispatched to member clusters", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
		}
		return
	}
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: api.ConditionDispatching, Status: metav1.ConditionFalse,
		Reason: api.ReasonSuspendDispatching, Message: "work dispatching is in a suspended state", ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// waitFor says why the detector must not write a claimed template's binding
// yet, as Karmada's detector returns "waiting for dependent overrides" or
// fails to resolve the PriorityClass: the event reason and message, or ""
// when nothing is missing. It also returns the resolved schedule priority.
func (d *detector) waitFor(ctx context.Context, tmpl *unstructured.Unstructured, claim policy.Claim) (*api.BindingSchedulePriority, string, string, error) {
	if len(claim.Spec.DependentOverrides) > 0 {
		ops, cops, invalid, err := hoststore.OverridePolicies(ctx, d.client, tmpl.GetNamespace())
		if err != nil {
			return nil, "", "", err
		}
		// An invalid override policy is as good as missing: the binding
		// would be rendered without it.
		if missing := policy.MissingDependentOverrides(claim, ops, cops); len(missing) > 0 {
			for _, p := range invalid {
				if slices.Contains(missing, p.Name) {
					return nil, api.ReasonPolicyInvalid, fmt.Sprintf("%s %s waits for %s (spec.dependentOverrides): %s", claim.Kind, policyName(claim), p.Ref(), p.Message()), nil
				}
			}
			kind := api.KindOverridePolicy
			if claim.Kind == api.KindClusterPropagationPolicy {
				kind = api.KindClusterOverridePolicy
			}
			return nil, api.ReasonDependentOverridesMissing, fmt.Sprintf("%s %s waits for %s %s (spec.dependentOverrides): no binding is written until it exists",
				claim.Kind, policyName(claim), kind, strings.Join(missing, ", ")), nil
		}
	}
	sp := claim.Spec.SchedulePriority
	if sp == nil {
		return nil, "", "", nil
	}
	var pc schedulingv1.PriorityClass
	err := d.client.Get(ctx, client.ObjectKey{Name: sp.PriorityClassName}, &pc)
	switch {
	case isNotFound(err):
		return nil, api.ReasonPriorityClassNotFound, fmt.Sprintf("%s %s: spec.schedulePriority.priorityClassName %q names no PriorityClass: no binding is written until it exists",
			claim.Kind, policyName(claim), sp.PriorityClassName), nil
	case err != nil:
		return nil, "", "", fmt.Errorf("read PriorityClass %s of %s %s: %w", sp.PriorityClassName, claim.Kind, policyName(claim), err)
	}
	return &api.BindingSchedulePriority{Priority: pc.Value}, "", "", nil
}

func policyName(c policy.Claim) string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// waiting records why a template's binding waits, as a Warning event on the
// template (kubectl describe shows it) and a log line.
func (d *detector) waiting(ctx context.Context, tmpl *unstructured.Unstructured, reason, message string) {
	ctrl.LoggerFrom(ctx).Info("template waits", "template", client.ObjectKeyFromObject(tmpl).String(), "reason", reason, "message", message)
	if d.events != nil {
		d.events.Eventf(tmpl, nil, corev1.EventTypeWarning, reason, "Propagate", "%s", message)
	}
}

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

// suspendedHeld lists the placed clusters whose Work is held back and was
// not applied at its current generation.
func suspendedHeld(placed []string, works map[string]*workv1.Work) []string {
	var out []string
	for _, c := range placed {
		if w := works[c]; w != nil && workSuspended(w) && !slices.Contains(out, c) {
			if a := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied); a == nil || a.ObservedGeneration != w.Generation {
				out = append(out, c)
			}
		}
	}
	return out
}
