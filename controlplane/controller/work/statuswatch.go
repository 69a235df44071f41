package work

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Bounds on what member changes may ask of the work status controller. A
// member, or a tenant who may write objects in it, decides how often its
// objects change; these keep that from deciding how often the host is
// read and written.
const (
	// statusEventInterval: a Work is observed because of member changes
	// at most once per interval; changes in between are coalesced into the
	// next observation.
	statusEventInterval = time.Second
	// memberEventRate and memberEventBurst bound the observations member
	// changes cause in one member, over all its Works: a member whose
	// objects change faster delays its own Works' status, no other
	// member's.
	memberEventRate  = 200
	memberEventBurst = 1000
	// pruneEvery is how many events pass between cleanups of the per-Work
	// coalescing record.
	pruneEvery = 4096
)

// indexWorkManifest indexes the Works in the host cache by the objects
// their manifests name (manifestKey), so a member object's change finds its
// Work without listing a member's Works.
const indexWorkManifest = "work.flotilla.io/manifest"

// manifestKey is the index value of one object: group, kind, namespace and
// name; the version is left out, as a template keeps its Work across API
// versions.
func manifestKey(gk schema.GroupKind, namespace, name string) string {
	return gk.Group + "/" + gk.Kind + "/" + namespace + "/" + name
}

// workManifests is the indexer of indexWorkManifest. Only the identity of
// each manifest is decoded.
func workManifests(obj client.Object) []string {
	w, ok := obj.(*workv1.Work)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(w.Spec.Workload.Manifests))
	for _, m := range w.Spec.Workload.Manifests {
		var id struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal(m.Raw, &id) != nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(id.APIVersion)
		if err != nil {
			continue
		}
		out = append(out, manifestKey(schema.GroupKind{Group: gv.Group, Kind: id.Kind}, id.Metadata.Namespace, id.Metadata.Name))
	}
	return out
}

// statusEvents turns changes of applied member objects into observations
// of the Works that applied them, coalesced per Work and rate limited per
// member. It is safe for concurrent use.
type statusEvents struct {
	reader client.Reader
	fleet  string
	// manager is the server-side apply field manager flotilla applies
	// with; an object no apply of it touched is not flotilla's.
	manager string
	queue   atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]

	mu sync.Mutex
	// slot is, per Work, when its last observation for a member change
	// was (or is) due.
	slot    map[types.NamespacedName]time.Time
	members map[string]*rate.Limiter
	events  int
	// later runs f after d (time.AfterFunc; tests record instead).
	later func(d time.Duration, f func())
}

func newStatusEvents(reader client.Reader, fleet, manager string) *statusEvents {
	return &statusEvents{reader: reader, fleet: fleet, manager: manager, slot: map[types.NamespacedName]time.Time{}, members: map[string]*rate.Limiter{},
		later: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// source is the controller's watch of member changes: it only takes hold
// of the controller's queue.
func (e *statusEvents) source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		e.queue.Store(&q)
		return nil
	})
}

// handler is the member.AppliedHandler of objects of gk in cluster.
func (e *statusEvents) handler(cluster string, gk schema.GroupKind) member.AppliedHandler {
	return func(obj *metav1.PartialObjectMetadata) {
		if !e.flotillas(obj) {
			return
		}
		var works workv1.WorkList
		if err := e.reader.List(context.Background(), &works, client.InNamespace(shared.ExecutionNamespace(cluster)),
			client.MatchingFields{indexWorkManifest: manifestKey(gk, obj.Namespace, obj.Name)}); err != nil {
			return
		}
		for i := range works.Items {
			e.add(cluster, client.ObjectKeyFromObject(&works.Items[i]), time.Now())
		}
	}
}

// flotillas reports whether obj carries the marks of this fleet's apply:
// the ownership labels, a template annotation, and a managed-fields entry
// of flotilla's field manager. Anyone who may write the object can copy
// them, so this is no proof; it keeps objects flotilla never applied from
// costing anything, and the Work an event names is only ever read again.
func (e *statusEvents) flotillas(obj *metav1.PartialObjectMetadata) bool {
	if obj.Labels[render.LabelManagedBy] != render.ManagedByFlotilla || obj.Labels[render.LabelFleet] != e.fleet {
		return false
	}
	if _, err := api.ParseTemplateRef(obj.Annotations[render.AnnotationTemplate]); err != nil {
		return false
	}
	return slices.ContainsFunc(obj.ManagedFields, func(f metav1.ManagedFieldsEntry) bool { return f.Manager == e.manager })
}

// add queues an observation of the Work key of cluster for a change seen
// at now: at once when none is due, else coalesced into the one due (no
// sooner than statusEventInterval after the last), and no faster than the
// member's rate.
func (e *statusEvents) add(cluster string, key types.NamespacedName, now time.Time) {
	q := e.queue.Load()
	if q == nil {
		return
	}
	e.mu.Lock()
	slot, ok := e.slot[key]
	if ok && now.Before(slot) {
		// An observation is due after this change: it reads it.
		e.mu.Unlock()
		return
	}
	next := now
	if ok && slot.Add(statusEventInterval).After(next) {
		next = slot.Add(statusEventInterval)
	}
	lim := e.members[cluster]
	if lim == nil {
		lim = rate.NewLimiter(memberEventRate, memberEventBurst)
		e.members[cluster] = lim
	}
	if d := lim.ReserveN(now, 1).DelayFrom(now); now.Add(d).After(next) {
		next = now.Add(d)
	}
	e.slot[key] = next
	if e.events++; e.events%pruneEvery == 0 {
		for k, t := range e.slot {
			if now.Sub(t) > statusEventInterval {
				delete(e.slot, k)
			}
		}
	}
	e.mu.Unlock()
	req := reconcile.Request{NamespacedName: key}
	if d := next.Sub(now); d > 0 {
		// Added when due, not with AddAfter: the controller's priority
		// queue folds a delayed add into one of the same Work already
		// waiting, whose read may come before this change.
		e.later(d, func() { (*q).Add(req) })
		return
	}
	(*q).Add(req)
}

// watchState is how the objects of a Work were watched when read back.
type watchState int

const (
	// unwatched: some object is not watched (no watching client, a
	// refused watch, an unmapped kind): read back every Resync.
	unwatched watchState = iota
	// syncing: some watch had not synced, so a change since the read may
	// go untold: read back again shortly (watchSyncRetry).
	syncing
	// watched: every object's watch was synced: read back every
	// StatusResync only.
	watched
)

// watchSyncRetry is how soon a Work read while its watch was syncing is
// read again: a watch syncs in well under a second, and the first status
// of a new kind in a member should not wait for the resync.
const watchSyncRetry = time.Second

// watch makes sure the objects are watched in cluster, telling e of their
// changes, and reports how they are watched.
func (s *workStatus) watch(ctx context.Context, cluster string, objs []*unstructured.Unstructured) watchState {
	if s.watches == nil || len(objs) == 0 {
		return unwatched
	}
	target, err := s.members.Connect(ctx, cluster)
	if err != nil {
		return unwatched
	}
	state := watched
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := target.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return unwatched
		}
		switch synced, pending := s.watches.WatchApplied(cluster, m.Resource, s.selector, s.events.handler(cluster, gvk.GroupKind())); {
		case pending:
			state = syncing
		case !synced:
			return unwatched
		}
	}
	return state
}

// resyncFor is when a Work is read back again without a member change,
// by how its objects were watched when read.
func (s *workStatus) resyncFor(state watchState) reconcile.Result {
	switch state {
	case watched:
		return resyncAfter(s.opts.StatusResync)
	case syncing:
		return reconcile.Result{RequeueAfter: watchSyncRetry}
	}
	return resyncAfter(s.opts.Resync)
}

// setupWatches indexes the Works by their manifests' objects and adds the
// member changes to the controller's watches.
func (s *workStatus) setupWatches(mgr ctrl.Manager, b *ctrl.Builder, exec *execution.Executor) error {
	if s.watches == nil {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &workv1.Work{}, indexWorkManifest, workManifests); err != nil {
		return err
	}
	s.selector = shared.AppliedSelector(s.opts.Fleet)
	s.events = newStatusEvents(mgr.GetClient(), s.opts.Fleet, exec.Manager())
	b.WatchesRawSource(s.events.source())
	return nil
}
