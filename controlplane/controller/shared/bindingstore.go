package shared

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// One code path for both binding kinds. A ClusterResourceBinding has a
// ResourceBinding's spec and status; the reconcilers hold either as a
// *workv1.ResourceBinding, and one with an empty namespace is a
// ClusterResourceBinding (a ResourceBinding always has a namespace). Only
// reads and writes, here, know which kind is stored; a reconcile request
// with an empty namespace names a ClusterResourceBinding. So the
// scheduler, the binding controller, application failover and the orphan
// collector serve both kinds with the same code, as Karmada's twin
// functions do with two.

// clusterScoped reports whether rb stands for a ClusterResourceBinding.
func clusterScoped(rb *workv1.ResourceBinding) bool { return rb.Namespace == "" }

// asStored returns the object rb is stored as. The result shares rb's
// maps and slices; fromStored copies what the server returned back.
func asStored(rb *workv1.ResourceBinding) client.Object {
	if !clusterScoped(rb) {
		return rb
	}
	return &workv1.ClusterResourceBinding{ObjectMeta: rb.ObjectMeta, Spec: rb.Spec, Status: rb.Status}
}

// fromStored copies a stored binding into rb.
func fromStored(obj client.Object, rb *workv1.ResourceBinding) {
	switch b := obj.(type) {
	case *workv1.ResourceBinding:
		if b != rb {
			*rb = *b
		}
	case *workv1.ClusterResourceBinding:
		rb.ObjectMeta, rb.Spec, rb.Status = b.ObjectMeta, b.Spec, b.Status
	}
}

// BindingView returns a binding event's object as a *workv1.ResourceBinding,
// whichever kind it is.
func BindingView(obj client.Object) (*workv1.ResourceBinding, bool) {
	switch b := obj.(type) {
	case *workv1.ResourceBinding:
		return b, true
	case *workv1.ClusterResourceBinding:
		return &workv1.ResourceBinding{ObjectMeta: b.ObjectMeta, Spec: b.Spec, Status: b.Status}, true
	}
	return nil, false
}

// GetBinding reads the binding key names: a ClusterResourceBinding when
// key has no namespace.
func GetBinding(ctx context.Context, c client.Reader, key client.ObjectKey, rb *workv1.ResourceBinding) error {
	if key.Namespace != "" {
		return c.Get(ctx, key, rb)
	}
	var crb workv1.ClusterResourceBinding
	if err := c.Get(ctx, key, &crb); err != nil {
		return err
	}
	*rb = workv1.ResourceBinding{}
	fromStored(&crb, rb)
	return nil
}

// UpdateBinding updates rb as stored.
func UpdateBinding(ctx context.Context, c client.Writer, rb *workv1.ResourceBinding) error {
	obj := asStored(rb)
	err := c.Update(ctx, obj)
	fromStored(obj, rb)
	return err
}

// PatchBinding merge-patches rb from orig, with an optimistic lock when
// lock is set.
func PatchBinding(ctx context.Context, c client.Writer, rb, orig *workv1.ResourceBinding, lock bool) error {
	var opts []client.MergeFromOption
	if lock {
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	obj := asStored(rb)
	err := c.Patch(ctx, obj, client.MergeFromWithOptions(asStored(orig), opts...))
	fromStored(obj, rb)
	return err
}

// PatchBindingStatus merge-patches rb's status from orig.
func PatchBindingStatus(ctx context.Context, c client.StatusClient, rb, orig *workv1.ResourceBinding) error {
	obj := asStored(rb)
	err := c.Status().Patch(ctx, obj, client.MergeFrom(asStored(orig)))
	fromStored(obj, rb)
	return err
}

// DeleteBinding deletes rb as stored.
func DeleteBinding(ctx context.Context, c client.Writer, rb *workv1.ResourceBinding, opts ...client.DeleteOption) error {
	return c.Delete(ctx, asStored(rb), opts...)
}

// CreateOrUpdateBinding is controllerutil.CreateOrUpdate for the binding
// key names, of either kind; mutate sees it as a ResourceBinding.
func CreateOrUpdateBinding(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(rb *workv1.ResourceBinding) error) error {
	var obj client.Object = &workv1.ResourceBinding{}
	if key.Namespace == "" {
		obj = &workv1.ClusterResourceBinding{}
	}
	obj.SetNamespace(key.Namespace)
	obj.SetName(key.Name)
	_, err := controllerutil.CreateOrUpdate(ctx, c, obj, func() error {
		rb, _ := BindingView(obj)
		if err := mutate(rb); err != nil {
			return err
		}
		if crb, ok := obj.(*workv1.ClusterResourceBinding); ok {
			crb.ObjectMeta, crb.Spec, crb.Status = rb.ObjectMeta, rb.Spec, rb.Status
		}
		return nil
	})
	return err
}

// ListAllBindings lists the ResourceBindings matching opts and, unless
// opts restrict them to a namespace, the ClusterResourceBindings too.
func ListAllBindings(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]workv1.ResourceBinding, error) {
	var list workv1.ResourceBindingList
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("list resource bindings: %w", err)
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.Namespace != "" {
		return list.Items, nil
	}
	var clusterList workv1.ClusterResourceBindingList
	if err := c.List(ctx, &clusterList, opts...); err != nil {
		return nil, fmt.Errorf("list cluster resource bindings: %w", err)
	}
	out := list.Items
	for i := range clusterList.Items {
		b := &clusterList.Items[i]
		out = append(out, workv1.ResourceBinding{ObjectMeta: b.ObjectMeta, Spec: b.Spec, Status: b.Status})
	}
	return out, nil
}

// forBindings is a controller built for ResourceBindings that also hears
// of ClusterResourceBindings, with the same predicates; their requests have
// no namespace.
func forBindings(b *builder.Builder, predicates ...builder.Predicates) *builder.Builder {
	var opts []builder.ForOption
	var wopts []builder.WatchesOption
	for _, p := range predicates {
		opts = append(opts, p)
		wopts = append(wopts, p)
	}
	return b.For(&workv1.ResourceBinding{}, opts...).
		Watches(&workv1.ClusterResourceBinding{}, &handler.EnqueueRequestForObject{}, wopts...)
}

// NewBindingController starts a controller builder for the bindings of
// both kinds.
func NewBindingController(mgr ctrl.Manager, name string, predicates ...builder.Predicates) *builder.Builder {
	return forBindings(ctrl.NewControllerManagedBy(mgr).Named(name), predicates...)
}
