package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// newKindRegistry makes the registry of the template kinds the host
// serves (discovery, filtered by opts), which starts a detector per kind
// once given its builder (startDetectors).
func newKindRegistry(mgr ctrl.Manager, opts Options) (*kindRegistry, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("discovery client for the host: %w", err)
	}
	log := mgr.GetLogger().WithName("template-kinds")
	kinds := &kindRegistry{
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

// withKinds returns opts with the template kinds registry, which the
// trust checks look kinds up in.
func (o Options) withKinds(kinds *kindRegistry) Options {
	o.kinds = kinds
	return o
}

// startDetectors sets how the registry builds a kind's detector.
func (k *kindRegistry) startDetectors(build func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error)) {
	k.build = build
}

// onRetired sets what the registry does with the bindings of a kind the
// host no longer serves.
func (k *kindRegistry) onRetired(retired func(ctx context.Context, gk schema.GroupKind) error) {
	k.retired = retired
}

// watchCRDs registers the CustomResourceDefinition watch that refreshes
// the registry.
func (k *kindRegistry) watchCRDs(mgr ctrl.Manager, now func() time.Time) error {
	return (&crdWatch{kinds: k, reader: mgr.GetClient(), now: now}).setup(mgr)
}

// newKindCache is the cache a kind's detector reads through: its
// informer's handlers go when the kind stops.
func newKindCache(c cache.Cache, ctx context.Context, gk schema.GroupKind) cache.Cache {
	return kindCache{Cache: c, ctx: ctx, gk: gk}
}

// newMembers makes the member connections every reconciler shares: one
// member.Cache, the single owner of member connections.
func newMembers(mgr ctrl.Manager, opts Options) *members {
	return &members{
		reader:            mgr.GetClient(),
		cache:             member.NewCache(member.CacheOptions{ProbeTimeout: opts.ProbeTimeout, RequestTimeout: opts.MemberRequestTimeout, Watch: true}),
		allowExecAndFiles: opts.AllowKubeconfigExecAndFiles,
		// The host's kube-system is read once, directly: a cached read
		// would watch every namespace.
		claims: &claims{host: mgr.GetAPIReader(), fleet: opts.Fleet, claimed: map[string]*member.Client{}},
	}
}

// newRecorder is the event recorder of one reconciler: each reports its
// events as its own controller.
func newRecorder(mgr ctrl.Manager, name string) recorder {
	return recorder{events: mgr.GetEventRecorder("flotilla-" + name)}
}
