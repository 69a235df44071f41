package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
)

// renderFailed records a render failure in the binding's condition. Nothing
// was applied or pruned, so the per-cluster record is kept as it is, and a
// bad template waits for a change rather than for backoff.
func (e *executionReconciler) renderFailed(ctx context.Context, rb *workv1.ResourceBinding, renderErr error) (reconcile.Result, error) {
	orig := rb.DeepCopy()
	meta.SetStatusCondition(&rb.Status.Conditions, metav1.Condition{
		Type: ConditionFullyApplied, Status: metav1.ConditionFalse, Reason: "RenderFailed", Message: renderErr.Error(),
		ObservedGeneration: rb.Generation, LastTransitionTime: metav1.NewTime(e.now()),
	})
	if err := e.patchStatus(ctx, orig, rb); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: e.opts.Resync}, nil
}

// writeStatus reads the applied objects back, aggregates their health into
// the binding's status and the template's .status, writes both when they
// changed, and ends the graceful eviction tasks that are over. kept are the
// clusters whose old copy a task holds.
func (e *executionReconciler) writeStatus(ctx context.Context, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, req execution.ApplyRequest, result execution.Result, kept []string) (reconcile.Result, error) {
	placed := make([]string, 0, len(req.Objects))
	for cluster := range req.Objects {
		placed = append(placed, cluster)
	}
	sort.Strings(placed)
	observeReqs := make([]execution.ObserveRequest, len(placed))
	for i, cluster := range placed {
		observeReqs[i] = execution.ObserveRequest{Cluster: cluster, Object: req.Objects[cluster]}
	}
	observations := e.executor.ObserveLive(ctx, observeReqs)
	items := make([]health.ClusterStatus, len(placed))
	var failures []string
	for i, obs := range observations {
		var live *unstructured.Unstructured
		if obs.Err == nil && !obs.NotFound {
			live = obs.Live
		}
		items[i] = health.Observe(obs.Cluster, live, tmpl.GetGeneration())
		if o, ok := result.Find(obs.Cluster, req.Template); ok && o.Err != nil {
			items[i].Applied, items[i].AppliedMessage = false, o.Err.Error()
			failures = append(failures, o.Err.Error())
		} else if obs.Err != nil {
			items[i].AppliedMessage = obs.Err.Error()
		}
	}
	agg := health.Aggregate(tmpl, items)

	orig := rb.DeepCopy()
	status := make([]api.AggregatedStatusItem, 0, len(items)+len(req.Prune)+len(kept))
	for _, it := range items {
		item := api.AggregatedStatusItem{ClusterName: it.Cluster, Applied: it.Applied, AppliedMessage: it.AppliedMessage, Health: api.ResourceHealth(it.Health)}
		if it.Status != nil {
			raw, err := json.Marshal(it.Status)
			if err == nil {
				item.Status = &runtime.RawExtension{Raw: raw}
			}
		}
		status = append(status, item)
	}
	// A pruned cluster whose removal failed stays on record, so that it is pruned later.
	for _, cluster := range req.Prune {
		if o, ok := result.Find(cluster, req.Template); ok && o.Action == execution.ActionFailed {
			status = append(status, api.AggregatedStatusItem{ClusterName: cluster, Applied: true, AppliedMessage: "pending removal: " + o.Err.Error(), Health: api.ResourceUnknown})
		}
	}
	// So does a cluster under graceful eviction, whose copy is removed when its task is over.
	for _, cluster := range kept {
		status = append(status, api.AggregatedStatusItem{ClusterName: cluster, Applied: true, AppliedMessage: "graceful eviction: kept until the new clusters are healthy or the grace period ends", Health: api.ResourceUnknown})
	}
	slices.SortFunc(status, func(a, b api.AggregatedStatusItem) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	rb.Status.AggregatedStatus = status

	cond := metav1.Condition{Type: ConditionFullyApplied, Status: metav1.ConditionTrue, Reason: "FullyAppliedSuccess", Message: "all works are applied", ObservedGeneration: rb.Generation, LastTransitionTime: metav1.NewTime(e.now())}
	switch {
	case len(failures) > 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "FullyAppliedFailed", strings.Join(failures, "; ")
	case len(placed) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "NotScheduled", "the binding has no clusters"
	}
	meta.SetStatusCondition(&rb.Status.Conditions, cond)
	if err := e.patchStatus(ctx, orig, rb); err != nil {
		return reconcile.Result{}, err
	}
	if err := e.reflect(ctx, tmpl, agg); err != nil {
		return reconcile.Result{}, err
	}
	wait, err := e.endEvictions(ctx, rb)
	if err != nil {
		return reconcile.Result{}, err
	}
	after := e.opts.Resync
	if wait > 0 && wait < after {
		after = wait
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// endEvictions drops the graceful eviction tasks that are over, judged on
// the status just observed; the spec change brings the binding back, and
// that pass prunes the clusters they held. Tasks wait for a schedule of the
// current generation, so that a health report from before the move is not
// read as the replacement's. It returns how long until the next deadline.
func (e *executionReconciler) endEvictions(ctx context.Context, rb *workv1.ResourceBinding) (time.Duration, error) {
	if len(rb.Spec.GracefulEvictionTasks) == 0 || rb.Status.SchedulerObservedGeneration != rb.Generation {
		return 0, nil
	}
	kept, done, wait := assessEvictions(rb.Spec.GracefulEvictionTasks, rb.Spec.Clusters, rb.Status.AggregatedStatus, e.now(), e.opts.GracefulEvictionTimeout)
	if len(done) == 0 {
		return wait, nil
	}
	orig := rb.DeepCopy()
	rb.Spec.GracefulEvictionTasks = kept
	// The scheduler adds tasks concurrently: a lost update would forget one.
	if err := e.client.Patch(ctx, rb, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return 0, fmt.Errorf("end graceful eviction from %s for binding %s: %w", strings.Join(done, ", "), client.ObjectKeyFromObject(rb), err)
	}
	return wait, nil
}

func (e *executionReconciler) patchStatus(ctx context.Context, orig, rb *workv1.ResourceBinding) error {
	if equality.Semantic.DeepEqual(orig.Status, rb.Status) {
		return nil
	}
	if err := e.client.Status().Patch(ctx, rb, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write status of binding %s: %w", client.ObjectKeyFromObject(rb), err)
	}
	return nil
}
