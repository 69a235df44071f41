package work

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// workExecution applies each Work's manifests to its member and removes
// them when the Work is deleted. It is the only controller that writes to
// members.
type workExecution struct {
	client   client.Client
	executor *execution.Executor
	opts     shared.Options
	now      func() time.Time
	// slots keeps a stalled member from taking every worker.
	slots  *memberSlots
	events shared.Recorder
	// agent is set in a pull-mode agent (SetupAgent), which executes the
	// Works of its own Pull cluster; the control plane itself only checks
	// those (stamp) and leaves their member to the agent.
	agent bool
	// signer signs the control plane's verdict on a Pull cluster's Work
	// (nil in the agent, which only checks signatures).
	signer *workSigner
}

func (e *workExecution) setup(mgr ctrl.Manager) error {
	trigger := executionTrigger
	if e.agent {
		trigger = agentTrigger
	}
	return ctrl.NewControllerManagedBy(mgr).Named("execution").
		For(&workv1.Work{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(ev event.UpdateEvent) bool {
				oldW, ok1 := ev.ObjectOld.(*workv1.Work)
				newW, ok2 := ev.ObjectNew.(*workv1.Work)
				return !ok1 || !ok2 || trigger(oldW, newW)
			},
		})).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: e.opts.WorkWorkers,
			ReconciliationTimeout:   e.opts.WorkTimeout + shared.HostWriteMargin,
		}).
		Complete(e)
}

// executionTrigger says whether a Work update needs the execution
// controller: a new spec, a deletion, a missing finalizer, or the work
// status controller finding an object gone from the member. Status updates
// otherwise (member health changing) need no apply.
func executionTrigger(oldW, newW *workv1.Work) bool {
	if oldW.Generation != newW.Generation || !newW.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(newW, shared.FinalizerExecution) {
		return true
	}
	was := apimeta.FindStatusCondition(oldW.Status.Conditions, api.ConditionWorkAvailable)
	is := apimeta.FindStatusCondition(newW.Status.Conditions, api.ConditionWorkAvailable)
	return is != nil && is.Reason == api.ReasonWorkNotFound && (was == nil || was.Reason != api.ReasonWorkNotFound)
}

// Reconcile applies or removes one Work.
func (e *workExecution) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster, ok := shared.ClusterOfNamespace(req.Namespace)
	if !ok {
		return reconcile.Result{}, nil
	}
	var w workv1.Work
	if err := e.client.Get(ctx, req.NamespacedName, &w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var cl clusterv1.Cluster
	err := e.client.Get(ctx, client.ObjectKey{Name: cluster}, &cl)
	switch {
	case shared.IsNotFound(err) && e.agent:
		// Not registered yet; a removed Cluster's Works are the control
		// plane's to clean up.
		return reconcile.Result{RequeueAfter: agentRetry}, nil
	case shared.IsNotFound(err):
		return reconcile.Result{}, e.orphaned(ctx, &w, cluster)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("read cluster %s of work %s: %w", cluster, req, err)
	}
	if e.agent && !shared.IsPull(&cl) {
		// Switched to Push: the control plane serves it now.
		return reconcile.Result{}, nil
	}
	if !w.DeletionTimestamp.IsZero() {
		if e.handsOff(&cl) {
			// The agent removes the objects and lets the Work go.
			return reconcile.Result{}, nil
		}
		return e.remove(ctx, &w, &cl)
	}
	if controllerutil.AddFinalizer(&w, shared.FinalizerExecution) {
		if err := e.client.Update(ctx, &w); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to work %s: %w", req, err)
		}
	}
	if shared.WorkSuspended(&w) {
		orig := w.DeepCopy()
		workDispatchingCondition(&w, e.now())
		return reconcile.Result{}, patchWorkStatus(ctx, e.client, orig, &w)
	}
	t, err := e.verify(ctx, &w, &cl)
	switch {
	case errors.Is(err, shared.ErrPending) && e.agent && errors.Is(err, errUnsigned):
		// Verified but not (yet) provably by the control plane: the key
		// may reach the agent's cache a moment after the Work. Say why on
		// the Work and look again soon; a forged Work costs a signature
		// check each time, and a status write only when the reason
		// changes.
		return e.unsigned(ctx, &w, &cl)
	case errors.Is(err, shared.ErrPending):
		return resyncAfter(e.opts.Resync), nil
	case err != nil && !shared.IsRefused(err):
		return reconcile.Result{}, err
	case e.handsOff(&cl):
		return e.stamp(ctx, &w, &cl, t, err)
	}
	orig := w.DeepCopy()
	workDispatchingCondition(&w, e.now())
	cond := metav1.Condition{Type: api.ConditionWorkApplied, ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(e.now())}
	var took time.Duration // of the apply, when one ran
	if err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, api.ReasonRefused, err.Error()
	} else if notReady := e.notReady(&cl); notReady != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, api.ReasonClusterNotReady, notReady
	} else {
		start := time.Now()
		var live []*unstructured.Unstructured
		var in *interpret.Interpreter
		busy, err := onMember(ctx, e.slots, cluster, e.opts.WorkTimeout, func(ctx context.Context) (err error) {
			live, in, err = e.apply(ctx, &w, cluster, t.Conflict)
			return err
		})
		took = time.Since(start)
		switch {
		case busy:
			return reconcile.Result{RequeueAfter: memberBusyRetry}, nil
		case err != nil:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, api.ReasonWorkApplyFailed, err.Error()
		default:
			cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, api.ReasonWorkApplied, "manifests are applied to cluster "+cluster
			e.reportApplied(ctx, &w, cluster, in, live)
		}
	}
	e.observeApply(&w, cluster, apimeta.FindStatusCondition(orig.Status.Conditions, api.ConditionWorkApplied), cond, took)
	apimeta.SetStatusCondition(&w.Status.Conditions, cond)
	if err := patchWorkStatus(ctx, e.client, orig, &w); err != nil {
		return reconcile.Result{}, err
	}
	// The resync applies again: a field changed by hand in the member is
	// taken back, as the server-side apply forces flotilla's fields.
	return resyncAfter(e.opts.Resync), nil
}

// clusterNotReady says why a member should not be written to now, or "".
// Only a Ready condition that is False counts: a cluster not probed yet is
// tried.
func clusterNotReady(cl *clusterv1.Cluster) string {
	c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse {
		return ""
	}
	return fmt.Sprintf("cluster %s is not ready: %s", cl.Name, c.Message)
}

// reportApplied writes what the apply returned into the Work's status as
// the work status controller reads it back (manifestStatuses, Available),
// so the Work's status is written once for both: that controller then finds
// nothing to change until the member changes the objects. live holds the
// applied objects in manifest order.
func (e *workExecution) reportApplied(ctx context.Context, w *workv1.Work, cluster string, in *interpret.Interpreter, live []*unstructured.Unstructured) {
	if in == nil || slices.Contains(live, nil) {
		return // not all applied: the work status controller reads them
	}
	statuses := make([]api.ManifestStatus, len(live))
	for i, obj := range live {
		statuses[i] = observedManifestStatus(ctx, e.executor.Clusters, in, cluster, i, api.TemplateRefOf(obj), obj)
	}
	w.Status.ManifestStatuses = statuses
	apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: api.ConditionWorkAvailable, Status: metav1.ConditionTrue, Reason: api.ReasonWorkAvailable, Message: availableMessage(cluster),
		ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(e.now()),
	})
}

// apply applies every manifest of the Work to its cluster and returns the
// applied objects, in manifest order, and the interpreter it used.
// The conflict resolution is the binding's trusted one, not the Work's
// annotation.
func (e *workExecution) apply(ctx context.Context, w *workv1.Work, cluster string, conflict api.ConflictResolution) ([]*unstructured.Unstructured, *interpret.Interpreter, error) {
	objs, err := shared.Manifests(w)
	if err != nil {
		return nil, nil, err
	}
	in, err := e.opts.Interpreters().Load(ctx, e.client)
	if err != nil {
		return nil, nil, err
	}
	live := make([]*unstructured.Unstructured, len(objs))
	var errs []error
	for i, obj := range objs {
		ref := api.TemplateRefOf(obj)
		result := e.executor.Apply(ctx, execution.ApplyRequest{
			Template:           ref,
			Objects:            map[string]*unstructured.Unstructured{cluster: obj},
			ConflictResolution: conflict,
			RetainMemberFields: true,
			Interpreter:        in,
			Karmada:            e.opts.KarmadaAdoptions.For(ref),
		})
		err := result.Err()
		var conflict *execution.ConflictError
		if shared.NamespaceWork(w) && errors.As(err, &conflict) && conflict.OtherFleet == "" {
			// The conflict error's advice (Overwrite) does not apply:
			// the namespace sync never adopts.
			err = fmt.Errorf("cluster %s: namespace %s existed before flotilla's namespace sync and is not managed by fleet %q; it is left as it is (labels, annotations) and never deleted by the sync", cluster, obj.GetName(), conflict.Fleet)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if o, ok := result.Find(cluster, ref); ok {
			live[i] = o.Live
		}
	}
	return live, in, errors.Join(errs...)
}

// remove deletes (or, with preserveResourcesOnDeletion, releases) the
// Work's objects in its member, then lets the Work go. A member that cannot
// be reached is tried again after the resync; other Works go on meanwhile.
func (e *workExecution) remove(ctx context.Context, w *workv1.Work, cl *clusterv1.Cluster) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(w, shared.FinalizerExecution) {
		return reconcile.Result{}, nil
	}
	owned, err := e.owned(ctx, w, cl)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !owned {
		// Not a Work flotilla rendered: its manifest must not remove
		// anything from the member.
		ctrl.LoggerFrom(ctx).Info("work does not belong to its binding; its member objects are left alone", "work", client.ObjectKeyFromObject(w).String())
		return reconcile.Result{}, e.dropFinalizer(ctx, w)
	}
	failure := e.notReady(cl)
	if failure == "" {
		busy, err := onMember(ctx, e.slots, cl.Name, e.opts.WorkTimeout, func(ctx context.Context) error { return e.delete(ctx, w, cl.Name) })
		if busy {
			return reconcile.Result{RequeueAfter: memberBusyRetry}, nil
		}
		if err != nil {
			failure = err.Error()
		}
	}
	if failure != "" {
		orig := w.DeepCopy()
		apimeta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: api.ConditionWorkApplied, Status: metav1.ConditionFalse, Reason: api.ReasonWorkRemovalFailed, Message: failure,
			ObservedGeneration: w.Generation, LastTransitionTime: metav1.NewTime(e.now()),
		})
		if err := patchWorkStatus(ctx, e.client, orig, w); err != nil && !shared.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		return resyncAfter(e.opts.Resync), nil
	}
	return reconcile.Result{}, e.dropFinalizer(ctx, w)
}

// delete removes the Work's objects from cluster; the error says why not.
func (e *workExecution) delete(ctx context.Context, w *workv1.Work, cluster string) error {
	objs, err := shared.Manifests(w)
	if err != nil {
		// Nothing can be removed from a manifest that cannot be read;
		// holding the Work forever would not help.
		ctrl.LoggerFrom(ctx).Info("work manifests cannot be decoded; nothing to remove", "work", client.ObjectKeyFromObject(w).String(), "reason", err.Error())
		return nil
	}
	preserve := w.Spec.PreserveResourcesOnDeletion != nil && *w.Spec.PreserveResourcesOnDeletion
	reqs := make([]execution.DeleteRequest, len(objs))
	for i, obj := range objs {
		ref := api.TemplateRefOf(obj)
		reqs[i] = execution.DeleteRequest{Template: ref, Clusters: []string{cluster}, PreserveResourcesOnDeletion: preserve, Karmada: e.opts.KarmadaAdoptions.For(ref)}
	}
	return e.executor.Delete(ctx, reqs...).Err()
}

// orphaned cleans a Work whose Cluster no longer exists from the host:
// there is no member left to remove anything from.
func (e *workExecution) orphaned(ctx context.Context, w *workv1.Work, cluster string) error {
	if w.DeletionTimestamp.IsZero() {
		if err := e.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !shared.IsNotFound(err) {
			return fmt.Errorf("delete work %s/%s of removed cluster %s: %w", w.Namespace, w.Name, cluster, err)
		}
		return nil
	}
	return e.dropFinalizer(ctx, w)
}

func (e *workExecution) dropFinalizer(ctx context.Context, w *workv1.Work) error {
	if !controllerutil.RemoveFinalizer(w, shared.FinalizerExecution) {
		return nil
	}
	if err := e.client.Update(ctx, w); err != nil && !shared.IsNotFound(err) {
		return fmt.Errorf("remove finalizer from work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// patchWorkStatus writes a Work's status when it changed. The execution
// and work status controllers write different conditions of the same list,
// so the patch is a compare-and-swap: a lost update would drop the other's.
func patchWorkStatus(ctx context.Context, c client.Client, orig, w *workv1.Work) error {
	if equality.Semantic.DeepEqual(orig.Status, w.Status) {
		return nil
	}
	if err := c.Status().Patch(ctx, w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("write status of work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}
