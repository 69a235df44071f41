package shared

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// ServedKinds is what the trust checks ask of the template kinds
// registry, the detector's discovery of the kinds the host serves.
type ServedKinds interface {
	// ServedKind is the version and scope the host serves gk at; ok is
	// false when no detector runs for gk.
	ServedKind(gk schema.GroupKind) (gvk schema.GroupVersionKind, namespaced, ok bool)
	// KindNames lists the served kinds as "group/version Kind", for
	// messages.
	KindNames() []string
}

// WithKinds returns opts with the template kinds registry, which the
// trust checks look kinds up in.
func (o Options) WithKinds(kinds ServedKinds) Options {
	o.kinds = kinds
	return o
}

// NewMembers makes the member connections every reconciler shares: one
// member.Cache, the single owner of member connections.
func NewMembers(mgr ctrl.Manager, opts Options) *Members {
	return &Members{
		reader: mgr.GetClient(),
		Cache: member.NewCache(member.CacheOptions{ProbeTimeout: opts.ProbeTimeout, RequestTimeout: opts.MemberRequestTimeout, Watch: true,
			// A namespace of an export is asked for on every resync of the
			// export at least; its slices stay watched well past that.
			EndpointSliceIdle: max(member.DefaultEndpointSliceIdle, 4*opts.WithDefaults().Resync)}),
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

// WithBacklog returns opts with the backlog that holds downstream writes
// while the detectors' and the scheduler's queues are long.
func (o Options) WithBacklog(b *Backlog) Options {
	o.backlog = b
	return o
}

// Backlog is the controllers' shared backlog; nil (options no setup
// function completed) holds nothing.
func (o Options) Backlog() *Backlog {
	return o.backlog
}
