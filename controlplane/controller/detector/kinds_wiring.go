package detector

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// NewKindRegistry makes the registry of the template kinds the host
// serves (discovery, filtered by opts), which starts a detector per kind
// once Setup gives it the detector builder.
func NewKindRegistry(mgr ctrl.Manager, opts shared.Options) (*KindRegistry, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("discovery client for the host: %w", err)
	}
	log := mgr.GetLogger().WithName("template-kinds")
	kinds := &KindRegistry{
		discovery: dc, filter: opts.TemplateKinds, active: map[schema.GroupKind]servedKind{}, noSecrets: opts.CredentialSecretsOnly,
		mayList: listProbe(mgr.GetAPIReader()), denied: map[schema.GroupKind]bool{},
		log: func(gvk schema.GroupVersionKind, err error) {
			log.Info("template kind left out: the control plane may not list it", "kind", gvk.String(), "reason", err.Error())
		},
	}
	kinds.forget = forgetInformer(mgr.GetCache())
	kinds.logger = log
	return kinds, nil
}

// startDetectors sets how the registry builds a kind's detector.
func (k *KindRegistry) startDetectors(build func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error)) {
	k.build = build
}

// onRetired sets what the registry does with the bindings of a kind the
// host no longer serves.
func (k *KindRegistry) onRetired(retired func(ctx context.Context, gk schema.GroupKind) error) {
	k.retired = retired
}

// watchCRDs registers the CustomResourceDefinition watch that refreshes
// the registry.
func (k *KindRegistry) watchCRDs(mgr ctrl.Manager, now func() time.Time) error {
	return (&crdWatch{kinds: k, reader: mgr.GetClient(), now: now}).setup(mgr)
}

// newKindCache is the cache a kind's detector reads through: its
// informer's handlers go when the kind stops.
func newKindCache(c cache.Cache, ctx context.Context, gk schema.GroupKind) cache.Cache {
	return kindCache{Cache: c, ctx: ctx, gk: gk}
}
