package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// detector claims templates of one kind and keeps their ResourceBindings.
type detector struct {
	client client.Client
	gvk    schema.GroupVersionKind
	opts   Options
}

func (d *detector) newTemplate() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(d.gvk)
	return u
}

func (d *detector) setup(mgr manager.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return d.templates(ctx, obj.GetNamespace())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("detector-"+strings.ToLower(d.gvk.Kind)+"."+d.gvk.Group).
		For(d.newTemplate()).
		Watches(&policyv1.PropagationPolicy{}, all).
		Watches(&policyv1.ClusterPropagationPolicy{}, all).
		// A binding's spec or labels changed by anyone else are written
		// back at once; the binding controller refuses them meanwhile.
		Watches(&workv1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(d.bindingTemplate), builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Complete(d)
}

// bindingTemplate maps a binding of this detector's kind to its template.
func (d *detector) bindingTemplate(_ context.Context, obj client.Object) []reconcile.Request {
	rb, ok := obj.(*workv1.ResourceBinding)
	if !ok || attached(rb) || groupKindOf(rb.Spec.Resource) != d.gvk.GroupKind() || rb.Spec.Resource.Namespace != rb.Namespace || rb.Spec.Resource.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: rb.Namespace, Name: rb.Spec.Resource.Name}}}
}

// templates lists the templates of this kind in namespace ("" for all).
func (d *detector) templates(ctx context.Context, namespace string) []reconcile.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(d.gvk.GroupVersion().WithKind(d.gvk.Kind + "List"))
	if err := d.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list templates", "kind", d.gvk.Kind)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// SystemNamespace holds flotilla's own objects in the host, such as
// member credentials; like the execution namespaces, it never holds
// templates (it is among DefaultReservedNamespaces).
const SystemNamespace = "flotilla-system"

// Reconcile claims one template and creates, updates or deletes its binding.
func (d *detector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if d.opts.Reserved(req.Namespace) {
		return reconcile.Result{}, nil
	}
	tmpl := d.newTemplate()
	err := d.client.Get(ctx, req.NamespacedName, tmpl)
	if err != nil && !isNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read %s %s: %w", d.gvk.Kind, req, err)
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: BindingName(d.gvk.GroupKind(), req.Name)}
	if isNotFound(err) || !tmpl.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, d.deleteBinding(ctx, key)
	}
	// The binding records the claim a previous pass made: claims are
	// sticky (policy.ResolveClaim), and a Lazy claim keeps its binding
	// until the template changes (policy.HeldLazily).
	existing := &workv1.ResourceBinding{}
	if err := d.client.Get(ctx, key, existing); err != nil {
		if !isNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("read binding %s: %w", key, err)
		}
		existing = nil
	}
	prev := recordedClaim(existing)
	claim, ok, err := d.claim(ctx, tmpl, prev)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !ok {
		return reconcile.Result{}, d.deleteBinding(ctx, key)
	}
	specHash, err := policy.SpecificationHash(tmpl)
	if err != nil {
		return reconcile.Result{}, err
	}
	if existing != nil && policy.HeldLazily(claim, prev, existing.Annotations[AnnotationTemplateSpecHash], specHash) {
		return reconcile.Result{}, nil
	}
	replicas, requirements, err := plan.Replicas(tmpl)
	if err != nil {
		// The template cannot change by itself; its next edit is reconciled.
		ctrl.LoggerFrom(ctx).Info("template cannot be bound", "template", req.String(), "reason", err.Error())
		return reconcile.Result{}, nil
	}
	rb := &workv1.ResourceBinding{}
	rb.Namespace, rb.Name = key.Namespace, key.Name
	_, err = controllerutil.CreateOrUpdate(ctx, d.client, rb, func() error {
		// Two kinds could still share a binding name (a core kind named
		// like another group's): a binding never changes kind, so one
		// template's flip can never delete the other's member objects.
		if rb.ResourceVersion != "" && groupKindOf(rb.Spec.Resource) != d.gvk.GroupKind() {
			return fmt.Errorf("binding %s is the binding of %s %s, not of %s %s: a binding never changes its resource's group or kind",
				key, rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind, tmpl.GetAPIVersion(), tmpl.GetKind())
		}
		if rb.Labels == nil {
			rb.Labels = map[string]string{}
		}
		// A policy now claims a dependency that was attached: it is the
		// template's own binding from here on.
		detach(rb)
		rb.Labels[LabelPolicy] = claim.Ref().String()
		if rb.Annotations == nil {
			rb.Annotations = map[string]string{}
		}
		rb.Annotations[AnnotationTemplateSpecHash] = specHash
		s := &rb.Spec
		s.Resource = api.ObjectReference{APIVersion: tmpl.GetAPIVersion(), Kind: tmpl.GetKind(), Namespace: tmpl.GetNamespace(), Name: tmpl.GetName(), UID: tmpl.GetUID()}
		s.Replicas, s.ReplicaRequirements = replicas, requirements
		placement := claim.Spec.Placement
		s.Placement = placement.DeepCopy()
		s.PropagateDeps = claim.Spec.PropagateDeps
		// The effective value: a namespaced policy's Overwrite counts
		// only when the operator allows it.
		s.ConflictResolution = EffectiveConflictResolution(&claim, d.opts)
		s.PreserveResourcesOnDeletion = claim.Spec.PreserveResourcesOnDeletion
		s.Failover = claim.Spec.Failover
		s.SchedulerName = claim.Spec.SchedulerName
		return nil
	})
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("write binding %s: %w", key, err)
	}
	return reconcile.Result{}, nil
}

// LabelPolicy names, on a ResourceBinding, the policy that claimed its template.
const LabelPolicy = "propagationpolicy.flotilla.io/claimed-by"

// AnnotationTemplateSpecHash records, on a ResourceBinding, the
// policy.SpecificationHash of the template the detector last wrote it for,
// so that a binding claimed by a Lazy policy is rewritten only when the
// template changes.
const AnnotationTemplateSpecHash = "propagationpolicy.flotilla.io/template-spec-hash"

func (d *detector) claim(ctx context.Context, tmpl *unstructured.Unstructured, prev *policy.ClaimRef) (policy.Claim, bool, error) {
	pp, cpp, err := PropagationPolicies(ctx, d.client, tmpl.GetNamespace())
	if err != nil {
		return policy.Claim{}, false, err
	}
	claim, ok := policy.ResolveClaim(tmpl, prev, pp, cpp)
	return claim, ok, nil
}

// recordedClaim is the claim a detector's binding records; nil for no
// binding, an attached one (the distributor's, which no policy claims) or
// a label that names no propagation policy.
func recordedClaim(rb *workv1.ResourceBinding) *policy.ClaimRef {
	if rb == nil || attached(rb) {
		return nil
	}
	ref, ok := policy.ParseClaimRef(rb.Labels[LabelPolicy])
	if !ok {
		return nil
	}
	return &ref
}

// deleteBinding deletes the binding of an unclaimed template, unless it is
// an attached binding: the dependencies distributor owns those.
func (d *detector) deleteBinding(ctx context.Context, key client.ObjectKey) error {
	rb := &workv1.ResourceBinding{}
	// A binding the cache does not hold yet is deleted by name all the
	// same; were it attached, the distributor writes it again.
	if err := d.client.Get(ctx, key, rb); err != nil && !isNotFound(err) {
		return fmt.Errorf("read binding %s: %w", key, err)
	}
	if attached(rb) {
		return nil
	}
	rb.Namespace, rb.Name = key.Namespace, key.Name
	if err := d.client.Delete(ctx, rb); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete binding %s: %w", key, err)
	}
	return nil
}
