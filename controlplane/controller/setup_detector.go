package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// detectorBuilder returns how the template kinds registry builds the
// detector of a kind: its events go to templates, for the binding
// controller.
func detectorBuilder(mgr ctrl.Manager, opts Options, templates chan<- event.GenericEvent) func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
		kc := newKindCache(mgr.GetCache(), ctx, gvk.GroupKind())
		return (&detector{client: mgr.GetClient(), gvk: gvk, namespaced: namespaced, opts: opts}).controller(mgr, kc, templates)
	}
}

// setupOrphanCollector registers the binding orphan collector with mgr;
// it also deletes the bindings of the kinds the registry retires.
func setupOrphanCollector(mgr ctrl.Manager, kinds *kindRegistry) error {
	orphans := &orphanCollector{client: mgr.GetClient(), reader: mgr.GetAPIReader(), kinds: kinds}
	kinds.onRetired(orphans.collectKind)
	return orphans.setup(mgr)
}
