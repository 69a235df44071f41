package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
)

// Messages of the binding's per-cluster items that no Work condition gives.
const (
	msgEvictionKept   = "graceful eviction: kept until the new clusters are healthy or the grace period ends"
	msgPendingRemoval = "pending removal"
)

// renderFailed records a render failure in the binding's condition. No Work
// was written or deleted, so the per-cluster record is kept as it is, and a
// bad template waits for a change rather than for backoff.
func (b *bindingReconciler) renderFailed(ctx context.Context, rb *workv1.ResourceBinding, renderErr error) (reconcile.Result, error) {
	orig := rb.DeepCopy()
	apimeta.SetStatusCondition(&rb.Status.Conditions, metav1.Condition{
		Type: api.ConditionFullyApplied, Status: metav1.ConditionFalse, Reason: "RenderFailed", Message: renderErr.Error(),
		ObservedGeneration: rb.Generation, LastTransitionTime: metav1.NewTime(b.now()),
	})
	if err := b.patchStatus(ctx, orig, rb); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: b.opts.Resync}, nil
}

// refused records why a binding is not rendered, in its FullyApplied
// condition. No Work is written or deleted: the Works it may have are
// those of an earlier, accepted spec, and stay until the binding is fixed
// or deleted.
func (b *bindingReconciler) refused(ctx context.Context, rb *workv1.ResourceBinding, why error) (reconcile.Result, error) {
	orig := rb.DeepCopy()
	apimeta.SetStatusCondition(&rb.Status.Conditions, metav1.Condition{
		Type: api.ConditionFullyApplied, Status: metav1.ConditionFalse, Reason: api.ReasonRefused, Message: why.Error(),
		ObservedGeneration: rb.Generation, LastTransitionTime: metav1.NewTime(b.now()),
	})
	if err := b.patchStatus(ctx, orig, rb); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// writeStatus aggregates the Works into the binding's status (one item per
// cluster that holds or may hold the object, and the FullyApplied
// condition) and the template's .status, writes both when they changed, and
// ends the graceful eviction tasks that are over. current holds the Work of
// each scheduled cluster as last written or read; staged is the staged
// rollout's outcome, nil without one.
func (b *bindingReconciler) writeStatus(ctx context.Context, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, current map[string]*workv1.Work, plan workPlan, staged *rolloutOutcome) (reconcile.Result, error) {
	ref := api.TemplateRefOf(tmpl)
	placed := make([]string, len(rb.Spec.Clusters))
	items := make([]health.ClusterStatus, len(rb.Spec.Clusters))
	for i, tc := range rb.Spec.Clusters {
		placed[i] = tc.Name
		items[i] = workClusterStatus(tc.Name, current[tc.Name], ref)
	}
	in, err := b.opts.Interpreters().Load(ctx, b.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	agg, err := health.AggregateWith(in, tmpl, items)
	if err != nil {
		// The members' statuses are still written; the template's
		// aggregated status waits for a working script.
		ctrl.LoggerFrom(ctx).Info("status cannot be aggregated", "template", ref.String(), "reason", err.Error())
	}

	orig := rb.DeepCopy()
	status := make([]api.AggregatedStatusItem, 0, len(items)+len(plan.Kept)+len(plan.Remove)+len(plan.Removing))
	for _, it := range items {
		status = append(status, aggregatedItem(it))
	}
	// A cluster under graceful eviction keeps its copy, which is removed
	// when its task is over; so does a cluster whose Work is being deleted
	// until its object is gone. Both stay on record meanwhile.
	for _, cluster := range plan.Kept {
		status = append(status, api.AggregatedStatusItem{ClusterName: cluster, Applied: true, AppliedMessage: msgEvictionKept, Health: api.ResourceUnknown})
	}
	for _, w := range slices.Concat(plan.Remove, plan.Removing) {
		cluster, _ := shared.ClusterOfNamespace(w.Namespace)
		if slices.Contains(placed, cluster) {
			continue
		}
		msg := msgPendingRemoval
		if c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied); c != nil && c.Reason == api.ReasonWorkRemovalFailed {
			msg += ": " + c.Message
		}
		status = append(status, api.AggregatedStatusItem{ClusterName: cluster, Applied: true, AppliedMessage: msg, Health: api.ResourceUnknown})
	}
	slices.SortFunc(status, func(a, b api.AggregatedStatusItem) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	rb.Status.AggregatedStatus = status

	cond := fullyApplied(placed, current)
	if held := suspendedHeld(placed, current); len(held) > 0 && cond.Reason == "Applying" {
		cond.Reason, cond.Message = api.ReasonSuspendDispatching, "dispatching to cluster "+strings.Join(held, ", ")+" is suspended by the propagation policy"
	}
	rolloutCondition(&cond, staged)
	cond.ObservedGeneration, cond.LastTransitionTime = rb.Generation, metav1.NewTime(b.now())
	apimeta.SetStatusCondition(&rb.Status.Conditions, cond)
	dispatchingCondition(&rb.Status.Conditions, rb.Spec.Suspension, placed, rb.Generation, b.now())
	rb.Status.Rollout = nil
	if staged != nil {
		rb.Status.Rollout = staged.status
	}
	if err := b.patchStatus(ctx, orig, rb); err != nil {
		return reconcile.Result{}, err
	}
	b.rolloutRecorded(rb, staged)
	if err := b.reflect(ctx, tmpl, agg); err != nil {
		return reconcile.Result{}, err
	}
	wait, err := b.endEvictions(ctx, rb)
	if err != nil {
		return reconcile.Result{}, err
	}
	after := b.opts.Resync
	if wait > 0 && wait < after {
		after = wait
	}
	if staged != nil && staged.wait > 0 && staged.wait < after {
		after = staged.wait
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// workClusterStatus reads what a scheduled cluster's Work says about the
// template's object there, in the terms of today's aggregation: Applied is
// true when the object was applied and was last seen to exist; otherwise
// AppliedMessage says why not (the apply error, "not found", an unreachable
// member). ResourceTemplateGeneration is set only when the Work's current
// spec was applied and observed since, so a status read before an apply is
// never taken for the new generation's.
func workClusterStatus(cluster string, w *workv1.Work, ref api.TemplateRef) health.ClusterStatus {
	cs := health.ClusterStatus{Cluster: cluster, Health: health.Unknown}
	if w == nil {
		cs.AppliedMessage = fmt.Sprintf("work %s/%s is not created yet", shared.ExecutionNamespace(cluster), shared.WorkName(ref))
		return cs
	}
	if !w.DeletionTimestamp.IsZero() {
		cs.AppliedMessage = fmt.Sprintf("work %s/%s is being deleted; it is created again once gone", w.Namespace, w.Name)
		return cs
	}
	applied := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
	available := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkAvailable)
	switch {
	case applied == nil && shared.WorkSuspended(w):
		cs.AppliedMessage = fmt.Sprintf("work %s/%s is not applied: the propagation policy suspends dispatching to cluster %s", w.Namespace, w.Name, cluster)
		return cs
	case applied == nil:
		cs.AppliedMessage = fmt.Sprintf("waiting for work %s/%s to be applied", w.Namespace, w.Name)
		return cs
	case applied.Status != metav1.ConditionTrue:
		cs.AppliedMessage = applied.Message
		return cs
	case available != nil && available.Status == metav1.ConditionFalse:
		cs.AppliedMessage = available.Message
		return cs
	}
	cs.Applied = true
	if available == nil || available.Status != metav1.ConditionTrue {
		return cs
	}
	if ms := shared.ManifestStatusOf(w.Status.ManifestStatuses, ref); ms != nil {
		cs.Health, cs.Message = health.Health(ms.Health), ms.HealthMessage
		if cs.Health == "" {
			cs.Health = health.Unknown
		}
		cs.Status, cs.Generation, cs.ObservedGeneration = shared.SplitStatus(ms.Status)
	}
	if applied.ObservedGeneration == w.Generation && available.ObservedGeneration == w.Generation {
		cs.ResourceTemplateGeneration, _ = strconv.ParseInt(w.Annotations[shared.AnnotationTemplateGeneration], 10, 64)
	}
	return cs
}

// aggregatedItem is a cluster's entry in binding.status.aggregatedStatus.
func aggregatedItem(it health.ClusterStatus) api.AggregatedStatusItem {
	item := api.AggregatedStatusItem{ClusterName: it.Cluster, Applied: it.Applied, AppliedMessage: it.AppliedMessage, Health: api.ResourceHealth(it.Health)}
	if it.Status != nil {
		if raw, err := json.Marshal(it.Status); err == nil {
			item.Status = &runtime.RawExtension{Raw: raw}
		}
	}
	return item
}

// fullyApplied is the binding's FullyApplied condition (without its
// generation and time): True when the Work of every scheduled cluster has
// its current spec applied; False with the failures, or with the clusters
// still waiting, otherwise.
func fullyApplied(placed []string, works map[string]*workv1.Work) metav1.Condition {
	cond := metav1.Condition{Type: api.ConditionFullyApplied, Status: metav1.ConditionFalse}
	if len(placed) == 0 {
		cond.Reason, cond.Message = "NotScheduled", "the binding has no clusters"
		return cond
	}
	var failures, waiting []string
	for _, cluster := range placed {
		w := works[cluster]
		if w == nil || !w.DeletionTimestamp.IsZero() {
			waiting = append(waiting, cluster)
			continue
		}
		c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		switch {
		case c != nil && c.Status == metav1.ConditionFalse:
			failures = append(failures, c.Message)
		case c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation:
			waiting = append(waiting, cluster)
		}
	}
	switch {
	case len(failures) > 0:
		cond.Reason, cond.Message = "FullyAppliedFailed", strings.Join(failures, "; ")
	case len(waiting) > 0:
		cond.Reason, cond.Message = "Applying", "waiting for the works of cluster "+strings.Join(waiting, ", ")+" to be applied"
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "FullyAppliedSuccess", "all works are applied"
	}
	return cond
}

// endEvictions drops the graceful eviction tasks that are over, judged on
// the status just aggregated; the spec change brings the binding back, and
// that pass deletes the Works they kept. Tasks wait for a schedule of the
// current generation, so that a health report from before the move is not
// read as the replacement's. It returns how long until the next deadline.
func (b *bindingReconciler) endEvictions(ctx context.Context, rb *workv1.ResourceBinding) (time.Duration, error) {
	if len(rb.Spec.GracefulEvictionTasks) == 0 || rb.Status.SchedulerObservedGeneration != rb.Generation {
		return 0, nil
	}
	kept, done, wait := shared.AssessEvictions(rb.Spec.GracefulEvictionTasks, rb.Spec.Clusters, rb.Status.AggregatedStatus, b.now(), b.opts.GracefulEvictionTimeout)
	if len(done) == 0 {
		return wait, nil
	}
	orig := rb.DeepCopy()
	rb.Spec.GracefulEvictionTasks = kept
	// The scheduler adds tasks concurrently: a lost update would forget one.
	if err := shared.PatchBinding(ctx, b.client, rb, orig, true); err != nil {
		return 0, fmt.Errorf("end graceful eviction from %s for %s: %w", strings.Join(done, ", "), hoststore.BindingRef(rb), err)
	}
	b.evicted(rb, done)
	return wait, nil
}

func (b *bindingReconciler) patchStatus(ctx context.Context, orig, rb *workv1.ResourceBinding) error {
	if equality.Semantic.DeepEqual(orig.Status, rb.Status) {
		return nil
	}
	if err := shared.PatchBindingStatus(ctx, b.client, rb, orig); err != nil {
		return fmt.Errorf("write status of %s: %w", hoststore.BindingRef(rb), err)
	}
	return nil
}
