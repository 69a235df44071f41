package detector

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	configv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/config/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// detector claims templates of one kind and keeps their bindings:
// ResourceBindings for a namespaced kind, ClusterResourceBindings for a
// cluster-scoped one.
type detector struct {
	client     client.Client
	gvk        schema.GroupVersionKind
	namespaced bool
	opts       shared.Options
	// events records why a template waits (dispatch.go); set in setup.
	events events.EventRecorder
}

func (d *detector) newTemplate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(d.gvk)
	return u
}

// controller builds the detector's controller, not added to the manager:
// it runs as long as its kind is served (kindRegistry.launch), with its
// watches on c, the cache that lets go of them when the kind stops. Each
// template event is also handed to the binding controller on templates.
func (d *detector) controller(mgr manager.Manager, c cache.Cache, templates chan<- event.GenericEvent) (controller.Controller, error) {
	d.events = mgr.GetEventRecorder("flotilla-detector")
	name := "detector-" + strings.ToLower(d.gvk.Kind) + "." + d.gvk.Group
	opts := controller.Options{Reconciler: d, Logger: mgr.GetLogger(), MaxConcurrentReconciles: d.opts.TemplateWorkers,
		// The plain queue: template events carry no priority of their own.
		// It was chosen when controller-runtime's priority queue (before
		// v0.25) could deadlock on shutdown with more than one worker
		// (kubernetes-sigs/controller-runtime#3538), which a detector, stopped
		// whenever its kind is, hit.
		UsePriorityQueue: ptr.To(false),
		// The same kind's detector is built again when its CRD returns.
		SkipNameValidation: ptr.To(true),
		// Templates waiting for their binding count in the backlog that
		// holds downstream writes (issue 40).
		NewQueue: d.opts.Backlog().PlainQueue}
	opts.DefaultFromConfig(mgr.GetControllerOptions())
	ctrlr, err := controller.NewUnmanaged(name, opts)
	if err != nil {
		return nil, err
	}
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return d.templates(ctx, obj.GetNamespace())
	})
	// A created override policy may be one a policy's dependentOverrides
	// waits for, and a created PriorityClass one a schedulePriority names.
	created := predicate.Funcs{
		UpdateFunc: func(event.UpdateEvent) bool { return false }, DeleteFunc: func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	// A binding's spec or labels changed by anyone else are written
	// back at once; the binding controller refuses them meanwhile.
	changed := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{})
	bindings := handler.EnqueueRequestsFromMapFunc(d.bindingTemplate)
	type watch struct {
		obj   client.Object
		h     handler.EventHandler
		preds []predicate.Predicate
	}
	watches := []watch{
		{obj: d.newTemplate(), h: &handler.EnqueueRequestForObject{}},
		{obj: d.newTemplate(), h: forwardTemplates(templates)},
		{obj: &policyv1.ClusterPropagationPolicy{}, h: all},
		{obj: &policyv1.ClusterOverridePolicy{}, h: all, preds: []predicate.Predicate{created}},
		{obj: &schedulingv1.PriorityClass{}, h: all, preds: []predicate.Predicate{created}},
		// A customization of this kind changes its replicas and
		// requirements: every template of the kind is bound again.
		{obj: &configv1.ResourceInterpreterCustomization{}, h: handler.EnqueueRequestsFromMapFunc(d.customized)},
	}
	if d.namespaced {
		watches = append(watches,
			watch{obj: &policyv1.PropagationPolicy{}, h: all},
			watch{obj: &policyv1.OverridePolicy{}, h: all, preds: []predicate.Predicate{created}},
			watch{obj: &workv1.ResourceBinding{}, h: bindings, preds: []predicate.Predicate{changed}})
	} else {
		// Only ClusterPropagationPolicies claim cluster-scoped templates.
		watches = append(watches, watch{obj: &workv1.ClusterResourceBinding{}, h: bindings, preds: []predicate.Predicate{changed}})
	}
	for _, w := range watches {
		if err := ctrlr.Watch(source.Kind(c, w.obj, w.h, w.preds...)); err != nil {
			return nil, err
		}
	}
	return ctrlr, nil
}

// forwardTemplates hands each template event to the binding controller,
// which re-renders the template's binding: the binding controller outlives
// every kind, so it reads the kinds' events from one channel instead of
// holding a watch per kind.
func forwardTemplates(templates chan<- event.GenericEvent) handler.EventHandler {
	send := func(ctx context.Context, obj client.Object) {
		select {
		case templates <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			send(ctx, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			send(ctx, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			send(ctx, e.Object)
		},
	}
}

// customized maps a ResourceInterpreterCustomization of this detector's
// kind to every template of the kind.
func (d *detector) customized(ctx context.Context, obj client.Object) []reconcile.Request {
	ric, ok := obj.(*configv1.ResourceInterpreterCustomization)
	if !ok || schema.FromAPIVersionAndKind(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind) != d.gvk {
		return nil
	}
	return d.templates(ctx, "")
}

// bindingTemplate maps a binding of this detector's kind to its template.
func (d *detector) bindingTemplate(_ context.Context, obj client.Object) []reconcile.Request {
	rb, ok := shared.BindingView(obj)
	if !ok || shared.Attached(rb) || hoststore.GroupKindOf(rb.Spec.Resource) != d.gvk.GroupKind() || rb.Spec.Resource.Namespace != rb.Namespace || rb.Spec.Resource.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: rb.Namespace, Name: rb.Spec.Resource.Name}}}
}

// templates lists the templates of this kind in namespace ("" for all).
func (d *detector) templates(ctx context.Context, namespace string) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(d.gvk.GroupVersion().WithKind(d.gvk.Kind + "List"))
	var opts []client.ListOption
	if d.namespaced {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := d.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list templates", "kind", d.gvk.Kind)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile claims one template and creates, updates or deletes its binding.
func (d *detector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// A reserved namespace is never propagated either, as a template of
	// its own (kube-system, flotilla-system, flotilla-es-*).
	if d.opts.Reserved(req.Namespace) || (d.gvk.GroupKind() == shared.NamespaceKind && d.opts.Reserved(req.Name)) {
		return reconcile.Result{}, nil
	}
	tmpl := d.newTemplate()
	err := d.client.Get(ctx, req.NamespacedName, tmpl)
	if err != nil && !shared.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read %s %s: %w", d.gvk.Kind, req, err)
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: hoststore.BindingName(d.gvk.GroupKind(), req.Name)}
	if shared.IsNotFound(err) || !tmpl.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, d.dropBinding(ctx, key, req.Name)
	}
	// The binding records the claim a previous pass made: claims are
	// sticky (policy.ResolveClaim), and a Lazy claim keeps its binding
	// until the template changes (policy.HeldLazily).
	existing := &workv1.ResourceBinding{}
	if err := shared.GetBinding(ctx, d.client, key, existing); err != nil {
		if !shared.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("read binding %s: %w", key, err)
		}
		existing = nil
	}
	if existing != nil && (hoststore.GroupKindOf(existing.Spec.Resource) != d.gvk.GroupKind() || d.othersBinding(existing, req.Name)) {
		// Another template's binding: its claim is not this one's (the
		// write below refuses it).
		existing = nil
	}
	prev := shared.RecordedClaim(existing)
	claim, ok, invalid, err := d.claim(ctx, tmpl, prev)
	if err != nil {
		return reconcile.Result{}, err
	}
	if invalid != nil {
		// The policy that claims the template became invalid: its binding
		// stays as last written until the policy is fixed (its watch
		// brings the template back) or deleted.
		d.waiting(ctx, tmpl, api.ReasonPolicyInvalid, invalid.Message()+": the binding keeps its last valid placement until the policy is fixed")
		return reconcile.Result{}, nil
	}
	if !ok {
		return reconcile.Result{}, d.dropBinding(ctx, key, req.Name)
	}
	// As in Karmada, a binding that exists is left as it is meanwhile.
	priority, reason, message, err := d.waitFor(ctx, tmpl, claim)
	switch {
	case err != nil:
		return reconcile.Result{}, err
	case reason != "":
		d.waiting(ctx, tmpl, reason, message)
		return reconcile.Result{RequeueAfter: waitRetry}, nil
	}
	specHash, err := policy.SpecificationHash(tmpl)
	if err != nil {
		return reconcile.Result{}, err
	}
	if existing != nil && policy.HeldLazily(claim, prev, existing.Annotations[shared.AnnotationTemplateSpecHash], specHash) {
		return reconcile.Result{}, nil
	}
	in, err := d.opts.Interpreters().Load(ctx, d.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	replicas, requirements, components, err := in.Workload(tmpl)
	if err != nil {
		// Neither the template nor a customization changes by itself;
		// the next edit of either is reconciled (a customization at the
		// next resync). Nothing is bound, so nothing is applied.
		ctrl.LoggerFrom(ctx).Info("template cannot be bound", "template", req.String(), "reason", err.Error())
		if d.events != nil {
			d.events.Eventf(tmpl, nil, corev1.EventTypeWarning, reasonInterpretFailed, "Bind", "%s", err.Error())
		}
		return reconcile.Result{RequeueAfter: d.opts.Resync}, nil
	}
	err = shared.CreateOrUpdateBinding(ctx, d.client, key, func(rb *workv1.ResourceBinding) error {
		// Two kinds could still share a binding name (a core kind named
		// like another group's), and two names (hoststore.BindingName lowercases
		// and replaces ':'): a binding never changes its template, so one
		// template's flip can never delete the other's member objects.
		if rb.ResourceVersion != "" && (hoststore.GroupKindOf(rb.Spec.Resource) != d.gvk.GroupKind() || d.othersBinding(rb, tmpl.GetName())) {
			return fmt.Errorf("%s is the binding of %s %s, not of %s %s: a binding never changes its template",
				hoststore.BindingRef(rb), rb.Spec.Resource.Kind, rb.Spec.Resource.Name, tmpl.GetKind(), tmpl.GetName())
		}
		if rb.ResourceVersion == "" {
			// Created with the binding controller's finalizer, as Karmada's
			// detector does: one write instead of a create and an update.
			controllerutil.AddFinalizer(rb, shared.FinalizerExecution)
		}
		if rb.Labels == nil {
			rb.Labels = map[string]string{}
		}
		// A policy now claims a dependency that was attached: it is the
		// template's own binding from here on.
		shared.Detach(rb)
		rb.Labels[hoststore.LabelPolicy] = claim.Ref().String()
		if rb.Annotations == nil {
			rb.Annotations = map[string]string{}
		}
		rb.Annotations[shared.AnnotationTemplateSpecHash] = specHash
		s := &rb.Spec
		s.Resource = api.ObjectReference{APIVersion: tmpl.GetAPIVersion(), Kind: tmpl.GetKind(), Namespace: tmpl.GetNamespace(), Name: tmpl.GetName(), UID: tmpl.GetUID()}
		s.Replicas, s.ReplicaRequirements, s.Components = replicas, requirements, components
		placement := claim.Spec.Placement
		s.Placement = placement.DeepCopy()
		s.PropagateDeps = claim.Spec.PropagateDeps
		// The effective value: a namespaced policy's Overwrite counts
		// only when the operator allows it.
		s.ConflictResolution = shared.EffectiveConflictResolution(&claim, d.opts)
		s.PreserveResourcesOnDeletion = claim.Spec.PreserveResourcesOnDeletion
		s.Failover = claim.Spec.Failover
		s.SchedulerName = claim.Spec.SchedulerName
		s.Suspension = mergeSuspension(s.Suspension, claim.Spec.Suspension)
		s.SchedulePriority = priority
		return nil
	})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("write binding %s: %w", key, err)
	}
	return reconcile.Result{}, nil
}

// reasonInterpretFailed is the event reason of a template whose kind's
// resource interpreter customization fails, so it is not bound.
const reasonInterpretFailed = "InterpretFailed"

// claim resolves the claim of tmpl over the valid policies; an invalid
// policy claims nothing. When prev, the claim its binding records, names
// a policy that is now invalid, that policy is returned instead.
func (d *detector) claim(ctx context.Context, tmpl *unstructured.Unstructured, prev *policy.ClaimRef) (policy.Claim, bool, *hoststore.InvalidPolicy, error) {
	pp, cpp, invalid, err := hoststore.PropagationPolicies(ctx, d.client, tmpl.GetNamespace())
	if err != nil {
		return policy.Claim{}, false, nil, err
	}
	if p := hoststore.Claimed(invalid, tmpl.GetNamespace(), prev); p != nil {
		return policy.Claim{}, false, p, nil
	}
	claim, ok := policy.ResolveClaim(tmpl, prev, pp, cpp)
	return claim, ok, nil, nil
}

// dropBinding deletes the binding of an unclaimed template, unless it is
// an attached binding (the dependencies distributor owns those) or the
// binding of another template whose binding name is the same ("Admin" and
// "admin").
func (d *detector) dropBinding(ctx context.Context, key client.ObjectKey, name string) error {
	rb := &workv1.ResourceBinding{}
	// Without a binding in the cache there is nothing to delete: every
	// unclaimed template of the host (namespaces, ClusterRoles …) would
	// otherwise cost a DELETE answered 404 on every start (issue 20). A
	// binding the cache does not hold yet brings its template back here
	// when it arrives (the binding watch passes creations), and is deleted
	// then.
	if err := shared.GetBinding(ctx, d.client, key, rb); err != nil {
		if shared.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("read binding %s: %w", key, err)
	}
	if shared.Attached(rb) || (rb.ResourceVersion != "" && d.othersBinding(rb, name)) {
		return nil
	}
	rb.Namespace, rb.Name = key.Namespace, key.Name
	if err := shared.DeleteBinding(ctx, d.client, rb); err != nil && !shared.IsNotFound(err) {
		return fmt.Errorf("delete binding %s: %w", key, err)
	}
	return nil
}

// othersBinding reports whether rb is the binding of another template of
// this kind whose binding name is the same as the template name's: names
// that differ only in case or in ':' and '.'. A resource name edited to
// anything else is the detector's to write back.
func (d *detector) othersBinding(rb *workv1.ResourceBinding, name string) bool {
	r := rb.Spec.Resource
	return r.Name != name && hoststore.GroupKindOf(r) == d.gvk.GroupKind() && hoststore.BindingName(d.gvk.GroupKind(), r.Name) == rb.Name
}
