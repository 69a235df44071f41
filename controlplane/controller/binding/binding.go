package binding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// pendingRetry is how soon an attached binding (a dependency) whose
// workload waits for the scheduler is looked at again.
const pendingRetry = time.Second

// bindingReconciler renders a binding into one Work per scheduled cluster,
// deletes the Works of clusters it left, and aggregates the Works' status
// into the binding's and the template's status. It never reaches a member:
// the Works are the durable record of where the template is, written before
// the execution controller applies anything.
type bindingReconciler struct {
	client client.Client
	// reader reads from the host, not the cache: a staged rollout's state
	// (status.rollout) must not be judged from a stale copy.
	reader client.Reader
	opts   shared.Options
	now    func() time.Time
	events shared.Recorder
}

// indexWorksByBinding is the host cache's field index of Works by their
// binding's permanent ID (the LabelBindingPermanentID label): a binding's
// Works are read through it, where a label selector looked at every Work
// of the fleet on every pass over a binding (issue 20).
const indexWorksByBinding = "flotilla.io/binding-permanent-id"

func (b *bindingReconciler) setup(mgr ctrl.Manager, templates <-chan event.GenericEvent) error {
	ctx := context.Background()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &workv1.Work{}, indexWorksByBinding, func(obj client.Object) []string {
		if id := obj.GetLabels()[shared.LabelBindingPermanentID]; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index works by binding: %w", err)
	}
	if err := hoststore.RegisterIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	bld := shared.NewBindingController(mgr, "binding").
		// The plain queue: binding events carry no priority of their own. It
		// was chosen when controller-runtime's priority queue (before v0.25)
		// could deadlock on shutdown with more than one worker
		// (kubernetes-sigs/controller-runtime#3538).
		WithOptions(controller.Options{MaxConcurrentReconciles: b.opts.BindingWorkers, UsePriorityQueue: ptr.To(false)}).
		Watches(&workv1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			if key, ok := shared.BindingOfWork(obj); ok {
				return []reconcile.Request{{NamespacedName: key}}
			}
			return nil
		})).
		// A namespaced policy re-renders the bindings of its namespace only;
		// a policy update that leaves its spec alone re-renders nothing.
		Watches(&policyv1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(shared.BindingsOfNamespace(b.client)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&policyv1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(shared.AllBindings(b.client)),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// The detectors hand over their templates' events.
		WatchesRawSource(source.Channel(templates, templateBindings(b.client)))
	if released := b.opts.Backlog().Released(); released != nil {
		// Bindings held while the schedule's queues were long come back.
		bld = bld.WatchesRawSource(source.Channel(released, &handler.EnqueueRequestForObject{}))
	}
	// An HPA's binding re-renders the workload it scales (markScaleTarget);
	// the mapping ignores every other binding.
	bld = bld.Watches(&workv1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(hpaTargets(b.client)))
	return bld.Complete(b)
}

// templateBindings maps a template's event to its binding, of either kind
// (a cluster-scoped template has no namespace, nor has its binding), and an
// HPA's to the workload it scales.
func templateBindings(c client.Client) handler.EventHandler {
	targets := hpaTargets(c)
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
		own := []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: hoststore.BindingName(gk, obj.GetName())}}}
		if gk == interpret.HorizontalPodAutoscalerKind {
			own = append(own, targets(ctx, obj)...)
		}
		return own
	})
}

// Reconcile makes one binding's Works match its schedule and reports them.
func (b *bindingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	if err := shared.GetBinding(ctx, b.client, req.NamespacedName, &rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !rb.DeletionTimestamp.IsZero() {
		return b.remove(ctx, &rb)
	}
	if controllerutil.AddFinalizer(&rb, shared.FinalizerExecution) {
		if err := shared.UpdateBinding(ctx, b.client, &rb); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer to binding %s: %w", req, err)
		}
	}
	if errs := shared.ValidateResourceBinding(&rb, b.opts); len(errs) > 0 {
		return b.refused(ctx, &rb, shared.RefuseBinding(&rb, errs...))
	}
	tmpl, err := shared.ReadTemplate(ctx, b.client, &rb)
	if shared.IsRefused(err) {
		return b.refused(ctx, &rb, err)
	}
	if err != nil || tmpl == nil {
		return reconcile.Result{}, err
	}
	t, err := shared.Trust(ctx, b.client, &rb, tmpl, b.opts)
	var refused *shared.RefusedError
	switch {
	case errors.Is(err, shared.ErrPending) && shared.Attached(&rb):
		// A dependency waiting for a workload's schedule hears of it from
		// no event of its own, so it looks again shortly.
		return reconcile.Result{RequeueAfter: pendingRetry}, nil
	case errors.Is(err, shared.ErrPending):
		// The scheduler's or the detector's write brings the binding back;
		// the resync is a safety net. Looking every second would keep the
		// controller busy with 10,000 unscheduled bindings on a cold start.
		return reconcile.Result{RequeueAfter: b.opts.Resync}, nil
	case errors.As(err, &refused):
		return b.refused(ctx, &rb, err)
	case err != nil:
		return reconcile.Result{}, err
	}
	// While many templates and bindings wait for the detectors and the
	// scheduler, a scheduled binding's Works and status wait too, so the
	// host's writes go to the schedule first; the backlog hands the
	// binding back once the queues are short (issue 40).
	if b.opts.Backlog().Hold(req) {
		return reconcile.Result{}, nil
	}
	// The status and the Works follow the trusted clusters; the binding's
	// spec itself is never written back from here.
	rb.Spec.Clusters = t.Clusters
	if err := shared.EnsureExecutionSpaces(ctx, b.client, t.Clusters); err != nil {
		return b.refused(ctx, &rb, err)
	}
	rendered, err := b.render(ctx, &rb, tmpl, t)
	if err != nil {
		return b.renderFailed(ctx, &rb, fmt.Errorf("render: %w", err))
	}
	desired := make(map[string]*workv1.Work, len(rendered))
	for cluster, r := range rendered {
		w, err := newWork(&rb, r, tmpl.GetGeneration(), t)
		if err != nil {
			return b.renderFailed(ctx, &rb, err)
		}
		desired[cluster] = w
	}
	existing, err := b.works(ctx, &rb, desired)
	if err != nil {
		return reconcile.Result{}, err
	}
	staged, err := b.stageWorks(ctx, &rb, tmpl, t, rendered, desired, existing)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := planWorks(desired, existing, func(cluster string) bool { return shared.Evicting(&rb, cluster) })
	current := make(map[string]*workv1.Work, len(existing))
	for i := range existing {
		if cluster, ok := shared.ClusterOfNamespace(existing[i].Namespace); ok && desired[cluster] != nil && existing[i].Name == desired[cluster].Name {
			current[cluster] = &existing[i]
		}
	}
	for _, w := range plan.Write {
		written, err := b.writeWork(ctx, w)
		if err != nil {
			return reconcile.Result{}, err
		}
		if cluster, ok := shared.ClusterOfNamespace(w.Namespace); ok && desired[cluster] != nil && written != nil {
			current[cluster] = written
		}
	}
	for _, w := range plan.Remove {
		if _, err := b.release(ctx, w, req.String()); err != nil {
			return reconcile.Result{}, err
		}
	}
	return b.writeStatus(ctx, &rb, tmpl, current, plan, staged)
}

// release lets go of a Work of a cluster the binding left: a Namespace the
// namespace sync creates anyway goes back to it in place, anything else
// is deleted (and so removed from the member). It reports whether the Work
// is being deleted.
func (b *bindingReconciler) release(ctx context.Context, w *workv1.Work, binding string) (bool, error) {
	handed, err := handBackToSync(ctx, b.client, b.opts, w)
	if err != nil || handed {
		return false, err
	}
	if err := b.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !shared.IsNotFound(err) {
		return false, fmt.Errorf("delete work %s/%s of binding %s: %w", w.Namespace, w.Name, binding, err)
	}
	return true, nil
}

// works lists the binding's Works, by label, plus any Work that already
// holds one of the desired names.
func (b *bindingReconciler) works(ctx context.Context, rb *workv1.ResourceBinding, desired map[string]*workv1.Work) ([]workv1.Work, error) {
	var list workv1.WorkList
	if err := b.client.List(ctx, &list, client.MatchingFields{indexWorksByBinding: string(rb.UID)}); err != nil {
		return nil, fmt.Errorf("list works of binding %s: %w", client.ObjectKeyFromObject(rb), err)
	}
	out := list.Items
	for _, want := range desired {
		key := client.ObjectKeyFromObject(want)
		if slices.ContainsFunc(out, func(w workv1.Work) bool { return client.ObjectKeyFromObject(&w) == key }) {
			continue
		}
		var w workv1.Work
		err := b.client.Get(ctx, key, &w)
		switch {
		case err == nil:
			out = append(out, w)
		case !shared.IsNotFound(err):
			return nil, fmt.Errorf("read work %s: %w", key, err)
		}
	}
	return out, nil
}

// writeWork creates or updates a Work; executionSpaces has made its
// namespace. It returns the Work as stored, or nil when a Create found the
// name taken (the informer cache lagged); the Work's own event brings the
// binding back.
func (b *bindingReconciler) writeWork(ctx context.Context, w *workv1.Work) (*workv1.Work, error) {
	if w.ResourceVersion != "" {
		if err := b.client.Update(ctx, w); err != nil {
			return nil, fmt.Errorf("update work %s/%s: %w", w.Namespace, w.Name, err)
		}
		return w, nil
	}
	err := b.client.Create(ctx, w)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("create work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return w, nil
}

// render renders the template for each scheduled cluster.
// Only the trusted clusters and replica scheduling are used, whatever the
// binding's own spec says.
func (b *bindingReconciler) render(ctx context.Context, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, t *shared.Trusted) (map[string]render.Work, error) {
	return shared.RenderTrusted(ctx, b.client, b.opts.Interpreters(), rb, tmpl, t, b.opts.Fleet, "")
}

// remove deletes the binding's Works and lets the binding go once they are
// gone, that is once the execution controller has removed (or released)
// their objects in the members.
func (b *bindingReconciler) remove(ctx context.Context, rb *workv1.ResourceBinding) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(rb, shared.FinalizerExecution) {
		return reconcile.Result{}, nil
	}
	var list workv1.WorkList
	if err := b.client.List(ctx, &list, client.MatchingFields{indexWorksByBinding: string(rb.UID)}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list works of binding %s: %w", client.ObjectKeyFromObject(rb), err)
	}
	left := 0
	for i := range list.Items {
		w := &list.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			left++
			continue
		}
		deleted, err := b.release(ctx, w, hoststore.BindingRef(rb))
		if err != nil {
			return reconcile.Result{}, err
		}
		if deleted {
			left++
		}
	}
	if left > 0 {
		// Each Work's deletion brings the binding back; the resync is a
		// safety net.
		return reconcile.Result{RequeueAfter: b.opts.Resync}, nil
	}
	controllerutil.RemoveFinalizer(rb, shared.FinalizerExecution)
	if err := shared.UpdateBinding(ctx, b.client, rb); err != nil && !shared.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("remove finalizer from binding %s: %w", client.ObjectKeyFromObject(rb), err)
	}
	return reconcile.Result{}, nil
}

// reflect writes the aggregated status into the template's .status, as
// Karmada does for the kinds it aggregates (Deployments among them).
func (b *bindingReconciler) reflect(ctx context.Context, tmpl *unstructured.Unstructured, agg health.Aggregated) error {
	if agg.Status == nil {
		return nil
	}
	current, _, _ := unstructured.NestedMap(tmpl.Object, "status")
	want := runtime.DeepCopyJSON(agg.Status)
	if sameStored(current, want) {
		return nil
	}
	updated := tmpl.DeepCopy()
	updated.Object["status"] = want
	// A merge patch of the status alone, with no resourceVersion: the
	// aggregation owns the template's status, and a spec change by its
	// owner (`kubectl scale`, a FederatedHPA) since the cache's copy must
	// not make this write conflict and the whole pass retry.
	if err := b.client.Status().Patch(ctx, updated, client.MergeFrom(tmpl)); err != nil {
		return fmt.Errorf("write status of template %s: %w", api.TemplateRefOf(tmpl), err)
	}
	return nil
}
