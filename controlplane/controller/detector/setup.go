package detector

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup starts the template kinds' detectors over kinds (NewKindRegistry;
// opts carries it, for the trust checks): the kinds the host serves now
// are known before the manager starts; their detectors start with the
// leader, later ones as discovery (every opts.Resync, and on a
// CustomResourceDefinition change) finds them, and each stops when its
// kind is no longer served. A detector's events go to templates, for the
// binding controller. It also registers the binding orphan collector,
// which deletes the bindings of the kinds the registry retires.
func Setup(mgr ctrl.Manager, opts shared.Options, kinds *KindRegistry, templates chan<- event.GenericEvent, now func() time.Time) error {
	kinds.startDetectors(detectorBuilder(mgr, opts, templates))
	if err := kinds.refresh(); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(kinds.run(opts.Resync))); err != nil {
		return fmt.Errorf("set up template kind discovery: %w", err)
	}
	if err := kinds.watchCRDs(mgr, now); err != nil {
		return fmt.Errorf("set up template kind discovery: %w", err)
	}
	if err := setupOrphanCollector(mgr, kinds); err != nil {
		return fmt.Errorf("set up binding orphan collector: %w", err)
	}
	return nil
}

// detectorBuilder returns how the template kinds registry builds the
// detector of a kind: its events go to templates, for the binding
// controller.
func detectorBuilder(mgr ctrl.Manager, opts shared.Options, templates chan<- event.GenericEvent) func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
	return func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error) {
		kc := newKindCache(mgr.GetCache(), ctx, gvk.GroupKind())
		return (&detector{client: mgr.GetClient(), gvk: gvk, namespaced: namespaced, opts: opts}).controller(mgr, kc, templates)
	}
}

// setupOrphanCollector registers the binding orphan collector with mgr;
// it also deletes the bindings of the kinds the registry retires.
func setupOrphanCollector(mgr ctrl.Manager, kinds *KindRegistry) error {
	orphans := &orphanCollector{client: mgr.GetClient(), reader: mgr.GetAPIReader(), kinds: kinds}
	kinds.onRetired(orphans.collectKind)
	return orphans.setup(mgr)
}
