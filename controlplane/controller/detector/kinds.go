package detector

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// secretKind is the core Secret kind, never a template kind when
// Options.CredentialSecretsOnly.
var secretKind = schema.GroupKind{Kind: "Secret"}

// servedKind is a kind discovery reports the host serves.
type servedKind struct {
	GVK        schema.GroupVersionKind
	namespaced bool
}

// templateKinds picks the template kinds out of what the host serves:
// with no filter, the preferred version of every kind that can be listed,
// watched and read, except the skipped ones; with a filter, exactly the
// listed group/version/kinds the host serves. preferred says whether a
// served kind is at its group's preferred version.
func templateKinds(served []servedKind, preferred func(schema.GroupVersion) bool, filter []schema.GroupVersionKind) []servedKind {
	var out []servedKind
	for _, s := range served {
		switch {
		case len(filter) > 0 && !slices.Contains(filter, s.GVK):
		case len(filter) == 0 && (shared.SkippedKind(s.GVK.GroupKind()) || !preferred(s.GVK.GroupVersion())):
		default:
			out = append(out, s)
		}
	}
	return out
}

// KindRegistry knows the template kinds the detectors run for, with their
// scope. It learns them from the host's discovery when the control plane
// starts, again every Options.Resync and whenever a
// CustomResourceDefinition changes, and starts a detector for each new one,
// so a CRD installed after start is propagated without a restart. A kind
// the host no longer serves (its CRD deleted) has its detector stopped,
// with its informer and every event handler it added, and is started
// afresh if the kind comes back.
type KindRegistry struct {
	discovery discovery.DiscoveryInterface
	filter    []schema.GroupVersionKind
	// build makes the detector of a kind, which runs until ctx ends.
	build func(ctx context.Context, gvk schema.GroupVersionKind, namespaced bool) (manager.Runnable, error)
	// forget drops a stopped kind's informer.
	forget func(gvk schema.GroupVersionKind)
	// retired deletes the bindings of a kind no longer served.
	retired func(ctx context.Context, gk schema.GroupKind) error
	// mayList tells whether the control plane may list a kind; a kind it
	// may not is left out (its informer would never sync), so the host
	// RBAC granted to the control plane also filters the template kinds.
	mayList func(gvk schema.GroupVersionKind) error
	// noSecrets leaves Secrets out (Options.CredentialSecretsOnly).
	noSecrets bool
	// denied are the kinds left out for RBAC, logged once by log.
	denied map[schema.GroupKind]bool
	log    func(gvk schema.GroupVersionKind, err error)
	// logger tells when a kind's detector starts and stops.
	logger logr.Logger

	mu     sync.RWMutex
	active map[schema.GroupKind]servedKind
	// served are the group/resources the host served at the last refresh
	// ("widgets.example.com"), to tell when a new CRD is served.
	served map[string]bool
	// refreshing serialises refreshes; it guards base and runs.
	refreshing sync.Mutex
	// base is the context the detectors run in, set once run starts (in
	// the leader); kinds found before wait for it.
	base context.Context
	runs map[schema.GroupKind]*kindRun
}

// lookup returns the version and scope the detector watches gk at.
func (k *KindRegistry) lookup(gk schema.GroupKind) (servedKind, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	s, ok := k.active[gk]
	return s, ok
}

// ServedKind is the version and scope the detector watches gk at; ok is
// false when no detector runs for gk (shared.ServedKinds, for the trust
// checks).
func (k *KindRegistry) ServedKind(gk schema.GroupKind) (gvk schema.GroupVersionKind, namespaced, ok bool) {
	s, ok := k.lookup(gk)
	return s.GVK, s.namespaced, ok
}

// KindNames lists the active kinds as "group/version Kind", for messages
// (shared.ServedKinds).
func (k *KindRegistry) KindNames() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]string, 0, len(k.active))
	for _, s := range k.active {
		out = append(out, s.GVK.GroupVersion().String()+" "+s.GVK.Kind)
	}
	slices.Sort(out)
	return out
}

// isServed reports whether the last refresh saw the group/resource.
func (k *KindRegistry) isServed(groupResource string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.served[groupResource]
}

// refresh reads discovery and starts a detector for each new template kind.
// A group whose discovery fails (an aggregated API that is down) is left
// out of this refresh only.
func (k *KindRegistry) refresh() error {
	k.refreshing.Lock()
	defer k.refreshing.Unlock()
	groups, lists, err := k.discovery.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return fmt.Errorf("discover the host's kinds: %w", err)
	}
	// A kind of a group whose discovery failed may still be served.
	var failed map[schema.GroupVersion]error
	if e, ok := err.(*discovery.ErrGroupDiscoveryFailed); ok {
		failed = e.Groups
	}
	preferredVersions := map[string]string{}
	for _, g := range groups {
		preferredVersions[g.Name] = g.PreferredVersion.Version
	}
	var served []servedKind
	groupResources := map[string]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			groupResources[schema.GroupResource{Group: gv.Group, Resource: r.Name}.String()] = true
			if !hasVerbs(r, "get", "list", "watch") {
				continue
			}
			served = append(served, servedKind{GVK: gv.WithKind(r.Kind), namespaced: r.Namespaced})
		}
	}
	preferred := func(gv schema.GroupVersion) bool { return preferredVersions[gv.Group] == gv.Version }
	var fresh []servedKind
	var gone []schema.GroupKind
	current := map[schema.GroupKind]bool{}
	k.mu.Lock()
	k.served = groupResources
	for _, s := range templateKinds(served, preferred, k.filter) {
		if k.noSecrets && s.GVK.GroupKind() == secretKind {
			continue
		}
		current[s.GVK.GroupKind()] = true
		if a, ok := k.active[s.GVK.GroupKind()]; !ok || a != s {
			fresh = append(fresh, s)
		}
	}
	gone = goneKinds(k.active, current, failed)
	k.mu.Unlock()
	for _, gk := range gone {
		k.retire(gk)
	}
	for _, s := range fresh {
		if k.mayList != nil {
			if err := k.mayList(s.GVK); err != nil {
				if !k.denied[s.GVK.GroupKind()] && k.log != nil {
					k.log(s.GVK, err)
				}
				k.mu.Lock()
				k.denied[s.GVK.GroupKind()] = true
				k.mu.Unlock()
				continue
			}
		}
		if k.base != nil {
			if err := k.launch(k.base, s); err != nil {
				return fmt.Errorf("start detector for %s: %w", s.GVK, err)
			}
		}
		k.mu.Lock()
		k.active[s.GVK.GroupKind()] = s
		k.mu.Unlock()
	}
	return nil
}

// begin starts the detectors of the kinds found so far in ctx, and every
// later one as it is found.
func (k *KindRegistry) begin(ctx context.Context) error {
	k.refreshing.Lock()
	defer k.refreshing.Unlock()
	k.base = ctx
	k.mu.RLock()
	kinds := make([]servedKind, 0, len(k.active))
	for _, s := range k.active {
		kinds = append(kinds, s)
	}
	k.mu.RUnlock()
	for _, s := range kinds {
		if err := k.launch(ctx, s); err != nil {
			return fmt.Errorf("start detector for %s: %w", s.GVK, err)
		}
	}
	return nil
}

// wait waits until every detector has stopped, once ctx has ended.
func (k *KindRegistry) wait() {
	k.refreshing.Lock()
	defer k.refreshing.Unlock()
	for _, run := range k.runs {
		run.cancel()
		<-run.done
	}
}

// goneKinds are the active kinds that are no longer template kinds
// (current), in a stable order; a kind of a group version whose discovery
// failed (failed) may still be served and is kept.
func goneKinds(active map[schema.GroupKind]servedKind, current map[schema.GroupKind]bool, failed map[schema.GroupVersion]error) []schema.GroupKind {
	var gone []schema.GroupKind
	for gk, s := range active {
		if _, unknown := failed[s.GVK.GroupVersion()]; !current[gk] && !unknown {
			gone = append(gone, gk)
		}
	}
	slices.SortFunc(gone, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return gone
}

func hasVerbs(r metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.Verbs, v) {
			return false
		}
	}
	return true
}

// run starts the detectors and refreshes the kinds every period until ctx
// ends, then waits for the detectors to stop; it runs in the leader only.
func (k *KindRegistry) run(period time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if err := k.begin(ctx); err != nil {
			return err
		}
		defer k.wait()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				if err := k.refresh(); err != nil {
					ctrl.LoggerFrom(ctx).Error(err, "refresh template kinds")
				}
			}
		}
	}
}

// crdWatch refreshes the kinds when a CustomResourceDefinition changes, so
// a new CRD's kind is detected, and a deleted one's detector stopped,
// without waiting for the periodic refresh. A CRD not yet served when its
// event arrives (not Established) is looked at again shortly while it is
// new, and a deleted one while discovery still serves it.
type crdWatch struct {
	kinds  *KindRegistry
	reader client.Reader
	now    func() time.Time
}

// crdNewFor is how long a CRD not yet served is looked at again every
// crdRetry; after that the periodic refresh picks it up.
const (
	crdNewFor = time.Minute
	crdRetry  = time.Second
)

func (w *crdWatch) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("template-kinds").
		For(&apiextensionsv1.CustomResourceDefinition{}, builder.OnlyMetadata).
		Complete(w)
}

// Reconcile refreshes the template kinds for one CRD's change.
func (w *crdWatch) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if err := w.kinds.refresh(); err != nil {
		return reconcile.Result{}, err
	}
	var crd metav1.PartialObjectMetadata
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := w.reader.Get(ctx, req.NamespacedName, &crd)
	switch {
	case apierrors.IsNotFound(err) && w.kinds.isServed(req.Name):
		// Deleted, and discovery has not caught up yet: its detector
		// stops once the kind is no longer served.
		return reconcile.Result{RequeueAfter: crdRetry}, nil
	case err != nil:
		return reconcile.Result{}, client.IgnoreNotFound(err)
	case w.kinds.isServed(req.Name):
		return reconcile.Result{}, nil
	}
	if crd.DeletionTimestamp.IsZero() && w.now().Sub(crd.CreationTimestamp.Time) < crdNewFor {
		return reconcile.Result{RequeueAfter: crdRetry}, nil
	}
	return reconcile.Result{}, nil
}

// listProbe is kindRegistry.mayList over the host: one list of at most one
// object's metadata. Only a refusal (Forbidden, Unauthorized) leaves a kind
// out; any other failure lets it start, and its informer retries.
func listProbe(reader client.Reader) func(gvk schema.GroupVersionKind) error {
	return func(gvk schema.GroupVersionKind) error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := reader.List(ctx, list, client.Limit(1))
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return err
		}
		return nil
	}
}
