package fleetview

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// ClusterAnnotation names, on every object the search cache serves, the
// member cluster it was read from. kubectl flotilla get sets the same
// annotation on what it reads through the proxy, so both views agree.
const ClusterAnnotation = "flotilla.io/cluster"

// KarmadaClusterAnnotation is karmada-search's annotation naming the member
// an object was cached from. In Karmada's API groups the cache sets it as
// well (CacheOptions.KarmadaAnnotation), so what a Karmada user's tools
// read from karmada-search's cache they read from this one.
const KarmadaClusterAnnotation = "resource.karmada.io/cached-from-cluster"

// watcherBuffer is how many events a slow watcher may fall behind before
// its watch is closed (the client lists again), so one stalled reader
// never holds memory or the informers.
const watcherBuffer = 256

// Source is one member cluster's connection for one cached kind.
type Source struct {
	// Cluster is the member's name.
	Cluster string
	// Client lists and watches the member with the control plane's own
	// member credentials: the cache reads everything selected, and the
	// host's RBAC decides who sees what of it when it is served.
	Client dynamic.Interface
	// Fingerprint identifies the connection; a change restarts the
	// member's informer over the new one.
	Fingerprint string
}

// Kind is one kind to cache and the members to cache it from.
type Kind struct {
	// Resource is the kind's resource, which the served path names.
	Resource schema.GroupVersionResource
	// GroupVersionKind is the kind, for the list's kind and for objects
	// that lack one.
	GroupVersionKind schema.GroupVersionKind
	// Namespaced is the kind's scope.
	Namespaced bool
	// Sources are the members, at most one per cluster.
	Sources []Source
}

// Cache keeps the objects of the selected kinds of the selected members,
// each as its JSON (managed fields dropped, the cluster annotation added)
// with the few fields the selectors read, and tells watchers of changes.
// Set replaces the whole selection; Start stops everything when its
// context ends. It is safe for concurrent use.
type Cache struct {
	base   context.Context
	cancel context.CancelFunc

	// clusterAnnotations name, on every cached object, its member.
	clusterAnnotations []string

	mu    sync.RWMutex
	kinds map[schema.GroupVersionResource]*cachedKind
}

// CacheOptions configures NewCache.
type CacheOptions struct {
	// KarmadaAnnotation also sets KarmadaClusterAnnotation on every cached
	// object, beside ClusterAnnotation: the control plane asks for it when
	// it serves Karmada's API groups.
	KarmadaAnnotation bool
}

// cachedKind is one kind's informers, one per member, and its watchers.
type cachedKind struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	clusters   map[string]*memberInformer
	watchers   map[*watcher]struct{}

	// generation counts changes to the kind's objects (every informer
	// event, every change of members). sorted is every object in list
	// order as of sortedGen: a list of all namespaces reuses it while
	// nothing changed instead of sorting 100,000 objects per request.
	// sortMu guards sorted and sortedGen; it is never held with the cache's
	// lock taken for writing.
	generation atomic.Uint64
	sortMu     sync.Mutex
	sorted     []*cachedObject
	sortedGen  uint64
}

// memberInformer is the informer of one kind in one member.
type memberInformer struct {
	fingerprint string
	informer    cache.SharedIndexInformer
	cancel      context.CancelFunc
}

// NewCache returns an empty cache.
func NewCache(opts CacheOptions) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	annotations := []string{ClusterAnnotation}
	if opts.KarmadaAnnotation {
		annotations = append(annotations, KarmadaClusterAnnotation)
	}
	return &Cache{base: ctx, cancel: cancel, clusterAnnotations: annotations, kinds: map[schema.GroupVersionResource]*cachedKind{}}
}

// NeedLeaderElection is false: every replica serves its own cache.
func (c *Cache) NeedLeaderElection() bool { return false }

// Start waits for ctx to end, then stops every informer and closes every
// watch.
func (c *Cache) Start(ctx context.Context) error {
	<-ctx.Done()
	c.Set(nil)
	c.cancel()
	return nil
}

// Set makes the cache hold exactly kinds: informers start for new kinds
// and members (or members whose connection changed) and stop, with their
// objects, for those no longer selected. A kind whose members changed
// closes its watches, so their clients list again and see the new set.
func (c *Cache) Set(kinds []Kind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wanted := map[schema.GroupVersionResource]Kind{}
	for _, k := range kinds {
		wanted[k.Resource] = k
	}
	for gvr, ck := range c.kinds {
		if _, ok := wanted[gvr]; !ok {
			ck.stop()
			delete(c.kinds, gvr)
		}
	}
	for gvr, k := range wanted {
		ck := c.kinds[gvr]
		if ck == nil {
			ck = &cachedKind{clusters: map[string]*memberInformer{}, watchers: map[*watcher]struct{}{}}
			c.kinds[gvr] = ck
		}
		ck.gvk, ck.namespaced = k.GroupVersionKind, k.Namespaced
		changed := false
		sources := map[string]Source{}
		for _, s := range k.Sources {
			sources[s.Cluster] = s
		}
		for name, mi := range ck.clusters {
			if s, ok := sources[name]; !ok || s.Fingerprint != mi.fingerprint {
				mi.cancel()
				delete(ck.clusters, name)
				changed = true
			}
		}
		for name, s := range sources {
			if _, ok := ck.clusters[name]; ok {
				continue
			}
			ck.clusters[name] = c.startInformer(gvr, ck, s)
			changed = true
		}
		if changed {
			ck.generation.Add(1)
			ck.closeWatchers()
		}
	}
}

// startInformer lists and watches gvr in one member, keeping each object
// as a cachedObject.
func (c *Cache) startInformer(gvr schema.GroupVersionResource, ck *cachedKind, s Source) *memberInformer {
	ctx, cancel := context.WithCancel(c.base)
	inf := dynamicinformer.NewFilteredDynamicInformer(s.Client, gvr, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	cluster, gvk := s.Cluster, ck.gvk
	// The transform runs before the store keeps an object: what is kept is
	// the compact form only, never the decoded map.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if u.GetKind() == "" {
				// The kind picks the printed columns.
				u.SetGroupVersionKind(gvk)
			}
			return compact(u, cluster, c.clusterAnnotations...)
		}
		return obj, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.notify(gvr, eventAdded, obj) },
		UpdateFunc: func(_, obj any) { c.notify(gvr, eventModified, obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			c.notify(gvr, eventDeleted, obj)
		},
	})
	go inf.RunWithContext(ctx)
	return &memberInformer{fingerprint: s.Fingerprint, informer: inf, cancel: cancel}
}

// notify hands an event to every watcher of gvr; one that is full is
// closed rather than waited for.
func (c *Cache) notify(gvr schema.GroupVersionResource, typ string, obj any) {
	o, ok := obj.(*cachedObject)
	if !ok {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	ck := c.kinds[gvr]
	if ck == nil {
		return
	}
	// The informer has stored obj before it calls its handlers, so a list
	// sorted before this increment is never taken for current after it.
	ck.generation.Add(1)
	for w := range ck.watchers {
		w.send(event{typ: typ, obj: o})
	}
}

func (ck *cachedKind) stop() {
	for _, mi := range ck.clusters {
		mi.cancel()
	}
	ck.closeWatchers()
}

func (ck *cachedKind) closeWatchers() {
	for w := range ck.watchers {
		w.close()
		delete(ck.watchers, w)
	}
}

// snapshot returns the kind's objects in namespace (all namespaces when
// empty), from every member, in list order (cmpObjects). The slice is
// shared: callers must not modify it.
func (c *Cache) snapshot(gvr schema.GroupVersionResource, namespace string) (schema.GroupVersionKind, bool, []*cachedObject, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ck := c.kinds[gvr]
	if ck == nil {
		return schema.GroupVersionKind{}, false, nil, false
	}
	if namespace == "" {
		return ck.gvk, ck.namespaced, ck.sortedAll(), true
	}
	out := ck.list(namespace)
	slices.SortFunc(out, cmpObjects)
	return ck.gvk, ck.namespaced, out, true
}

// sortedAll returns every object in list order, sorting only when an
// object or a member changed since the last sort. The caller holds the
// cache's read lock.
func (ck *cachedKind) sortedAll() []*cachedObject {
	ck.sortMu.Lock()
	defer ck.sortMu.Unlock()
	// Read the generation before the stores: a change that lands while
	// they are read leaves a newer generation, and the next list sorts
	// again.
	gen := ck.generation.Load()
	if ck.sorted != nil && ck.sortedGen == gen {
		return ck.sorted
	}
	out := ck.list("")
	slices.SortFunc(out, cmpObjects)
	ck.sorted, ck.sortedGen = out, gen
	return out
}

// list returns the objects of every member in namespace (all when empty),
// unordered.
func (ck *cachedKind) list(namespace string) []*cachedObject {
	var out []*cachedObject
	for _, mi := range ck.clusters {
		var items []any
		if namespace == "" {
			items = mi.informer.GetStore().List()
		} else {
			items, _ = mi.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		}
		for _, it := range items {
			if o, ok := it.(*cachedObject); ok {
				out = append(out, o)
			}
		}
	}
	return out
}

// watch registers a watcher of gvr and returns the current objects (taken
// under the same lock, so no event between them is lost), or false when
// the kind is not cached.
func (c *Cache) watch(gvr schema.GroupVersionResource) (w *watcher, current []*cachedObject, namespaced, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ck := c.kinds[gvr]
	if ck == nil {
		return nil, nil, false, false
	}
	w = &watcher{events: make(chan event, watcherBuffer), done: make(chan struct{})}
	ck.watchers[w] = struct{}{}
	for _, mi := range ck.clusters {
		for _, it := range mi.informer.GetStore().List() {
			if o, ok := it.(*cachedObject); ok {
				current = append(current, o)
			}
		}
	}
	return w, current, ck.namespaced, true
}

// unwatch removes w, when its client went away.
func (c *Cache) unwatch(gvr schema.GroupVersionResource, w *watcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ck := c.kinds[gvr]; ck != nil {
		if _, ok := ck.watchers[w]; ok {
			w.close()
			delete(ck.watchers, w)
		}
	}
}

// Synced reports whether every member's informer of gvr has listed once.
func (c *Cache) Synced(gvr schema.GroupVersionResource) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ck := c.kinds[gvr]
	if ck == nil {
		return false
	}
	for _, mi := range ck.clusters {
		if !mi.informer.HasSynced() {
			return false
		}
	}
	return true
}

const (
	eventAdded    = "ADDED"
	eventModified = "MODIFIED"
	eventDeleted  = "DELETED"
)

type event struct {
	typ string
	obj *cachedObject
}

// watcher is one open watch. events is closed with done when the cache
// drops it; send never blocks.
type watcher struct {
	mu     sync.Mutex
	closed bool
	events chan event
	done   chan struct{}
}

// send queues ev; a watcher that has fallen watcherBuffer events behind is
// closed instead.
func (w *watcher) send(ev event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	select {
	case w.events <- ev:
	default:
		w.closed = true
		close(w.done)
	}
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.done)
	}
}

// cachedObject is what the cache keeps of one member object: its JSON,
// and the fields the selectors and the authorization read. Keeping the
// JSON rather than the decoded map costs a fraction of the memory and is
// what a list writes out anyway.
type cachedObject struct {
	cluster   string
	namespace string
	name      string
	labels    map[string]string
	meta      metav1.ObjectMeta
	raw       json.RawMessage
	// created, row and partial are the object's Table row, rendered once when
	// the object enters the cache (one cost per change, not per request):
	// row is the cells before AGE (CLUSTER, NAME, the kind's columns) as
	// the inside of a JSON array, partial its PartialObjectMetadata; only AGE,
	// which moves with the clock, is written per request.
	created time.Time
	row     []byte
	partial []byte
}

// compact drops the managed fields, sets the annotations naming the
// cluster (ClusterAnnotation when none is given) and keeps the object's
// JSON.
func compact(u *unstructured.Unstructured, cluster string, clusterAnnotations ...string) (*cachedObject, error) {
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	if len(clusterAnnotations) == 0 {
		clusterAnnotations = []string{ClusterAnnotation}
	}
	for _, k := range clusterAnnotations {
		annotations[k] = cluster
	}
	u.SetAnnotations(annotations)
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: encode %s %s/%s: %w", cluster, u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	o := &cachedObject{cluster: cluster, namespace: u.GetNamespace(), name: u.GetName(), labels: u.GetLabels(), raw: raw,
		created: u.GetCreationTimestamp().Time}
	if o.row, err = renderRow(u, cluster); err != nil {
		return nil, fmt.Errorf("cluster %s: print %s %s/%s: %w", cluster, u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	o.partial = renderPartial(o)
	// The informer's store keys objects by namespace/name and the
	// reflector reads the resourceVersion, so those stay at hand.
	o.meta = metav1.ObjectMeta{Namespace: o.namespace, Name: o.name, ResourceVersion: u.GetResourceVersion(), UID: u.GetUID()}
	return o, nil
}

// GetObjectMeta lets the informer's store key the object.
func (o *cachedObject) GetObjectMeta() metav1.Object { return &o.meta }

// GetObjectKind is runtime.Object's; the kind is in raw.
func (o *cachedObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject is runtime.Object's. A cachedObject is never modified
// once built, so the copy shares its JSON.
func (o *cachedObject) DeepCopyObject() runtime.Object {
	cp := *o
	cp.labels = maps.Clone(o.labels)
	return &cp
}
