package controller

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// BindingName is the name of the ResourceBinding of a template, Karmada's
// "<name>-<kind>".
func BindingName(kind, name string) string {
	return name + "-" + strings.ToLower(kind)
}

// detector claims templates of one kind and keeps their ResourceBindings.
type detector struct {
	client client.Client
	gvk    schema.GroupVersionKind
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
		Complete(d)
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
// member credentials; like the execution namespaces, it never holds templates.
const SystemNamespace = "flotilla-system"

// reservedNamespace reports namespaces whose objects are never templates:
// flotilla's own and Kubernetes' (kube-*), as Karmada skips karmada-system,
// karmada-es-* and, by default, kube-*.
func reservedNamespace(ns string) bool {
	return ns == SystemNamespace || strings.HasPrefix(ns, ExecutionNamespacePrefix) || strings.HasPrefix(ns, "kube-")
}

// Reconcile claims one template and creates, updates or deletes its binding.
func (d *detector) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if reservedNamespace(req.Namespace) {
		return reconcile.Result{}, nil
	}
	tmpl := d.newTemplate()
	err := d.client.Get(ctx, req.NamespacedName, tmpl)
	if err != nil && !isNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("read %s %s: %w", d.gvk.Kind, req, err)
	}
	key := client.ObjectKey{Namespace: req.Namespace, Name: BindingName(d.gvk.Kind, req.Name)}
	if isNotFound(err) || !tmpl.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, d.deleteBinding(ctx, key)
	}
	claim, ok, err := d.claim(ctx, tmpl)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !ok {
		return reconcile.Result{}, d.deleteBinding(ctx, key)
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
		if rb.Labels == nil {
			rb.Labels = map[string]string{}
		}
		// A policy now claims a dependency that was attached: it is the
		// template's own binding from here on.
		detach(rb)
		rb.Labels[LabelPolicy] = claim.Kind + "." + claim.Name
		s := &rb.Spec
		s.Resource = api.ObjectReference{APIVersion: tmpl.GetAPIVersion(), Kind: tmpl.GetKind(), Namespace: tmpl.GetNamespace(), Name: tmpl.GetName(), UID: tmpl.GetUID()}
		s.Replicas, s.ReplicaRequirements = replicas, requirements
		placement := claim.Spec.Placement
		s.Placement = placement.DeepCopy()
		s.PropagateDeps = claim.Spec.PropagateDeps
		s.ConflictResolution = claim.Spec.ConflictResolution
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

func (d *detector) claim(ctx context.Context, tmpl *unstructured.Unstructured) (policy.Claim, bool, error) {
	pp, cpp, err := PropagationPolicies(ctx, d.client, tmpl.GetNamespace())
	if err != nil {
		return policy.Claim{}, false, err
	}
	claim, ok := policy.ClaimPropagation(tmpl, pp, cpp)
	return claim, ok, nil
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
