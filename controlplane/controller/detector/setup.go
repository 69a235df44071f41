package detector

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Builder returns how the template kinds registry builds the
// detector of a kind: its events go to templates, for the binding
// controller.
func Builder(mgr ctrl.Manager, opts shared.Options, templates chan<- event.GenericEvent) func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
		kc := shared.NewKindCache(mgr.GetCache(), ctx, gvk.GroupKind())
		return (&detector{client: mgr.GetClient(), gvk: gvk, namespaced: namespaced, opts: opts}).controller(mgr, kc, templates)
	}
}

// SetupOrphanCollector registers the binding orphan collector with mgr;
// it also deletes the bindings of the kinds the registry retires.
func SetupOrphanCollector(mgr ctrl.Manager, kinds *shared.KindRegistry) error {
	orphans := &orphanCollector{client: mgr.GetClient(), reader: mgr.GetAPIReader(), kinds: kinds}
	kinds.OnRetired(orphans.collectKind)
	return orphans.setup(mgr)
}
