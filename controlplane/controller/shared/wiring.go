package shared

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// NewKindRegistry makes the registry of the template kinds the host
// serves (discovery, filtered by opts), which starts a detector per kind
// once given its builder (startDetectors).
func NewKindRegistry(mgr ctrl.Manager, opts Options) (*KindRegistry, error) {
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

// WithKinds returns opts with the template kinds registry, which the
// trust checks look kinds up in.
func (o Options) WithKinds(kinds *KindRegistry) Options {
	o.kinds = kinds
	return o
}

// StartDetectors sets how the registry builds a kind's detector.
func (k *KindRegistry) StartDetectors(build func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error)) {
	k.build = build
}

// OnRetired sets what the registry does with the bindings of a kind the
// host no longer serves.
func (k *KindRegistry) OnRetired(retired func(ctx context.Context, gk schema.GroupKind) error) {
	k.retired = retired
}

// WatchCRDs registers the CustomResourceDefinition watch that refreshes
// the registry.
func (k *KindRegistry) WatchCRDs(mgr ctrl.Manager, now func() time.Time) error {
	return (&crdWatch{kinds: k, reader: mgr.GetClient(), now: now}).setup(mgr)
}

// NewKindCache is the cache a kind's detector reads through: its
// informer's handlers go when the kind stops.
func NewKindCache(c cache.Cache, ctx context.Context, gk schema.GroupKind) cache.Cache {
	return kindCache{Cache: c, ctx: ctx, gk: gk}
}

// NewMembers makes the member connections every reconciler shares: one
// member.Cache, the single owner of member connections.
func NewMembers(mgr ctrl.Manager, opts Options) *Members {
	return &Members{
		reader:            mgr.GetClient(),
		Cache:             member.NewCache(member.CacheOptions{ProbeTimeout: opts.ProbeTimeout, RequestTimeout: opts.MemberRequestTimeout, Watch: true}),
		allowExecAndFiles: opts.AllowKubeconfigExecAndFiles,
		// The host's kube-system is read once, directly: a cached read
		// would watch every namespace.
		claims: &claims{host: mgr.GetAPIReader(), fleet: opts.Fleet, claimed: map[string]*member.Client{}},
	}
}

// NewRecorder is the event recorder of one reconciler: each reports its
// events as its own controller.
func NewRecorder(mgr ctrl.Manager, name string) Recorder {
	return Recorder{events: mgr.GetEventRecorder("flotilla-" + name)}
}

// WithInterpreters returns opts with the one interpreter cache every
// controller loads customizations from, so a customization's scripts load
// once per generation rather than once per reconcile.
func (o Options) WithInterpreters(is *hoststore.Interpreters) Options {
	o.interpreters = is
	return o
}

// Interpreters is the controllers' interpreter cache; nil (options no
// setup function completed) loads afresh per call.
func (o Options) Interpreters() *hoststore.Interpreters {
	return o.interpreters
}
