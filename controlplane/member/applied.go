package member

import (
	"context"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// DefaultAppliedIdle is how long a watching cache keeps the watch of one
// applied kind that nobody asked for, when CacheOptions sets no
// AppliedIdle.
const DefaultAppliedIdle = 20 * time.Minute

// AppliedHandler is told of every change to a watched applied object
// (Client.WatchApplied) after the watch's first list: the object's
// metadata, cut down to its name, namespace, resourceVersion, labels, the
// template annotation and the managers that applied it (with a digest of
// each one's field set in place of the set); its
// last known state for a deletion. It must not block nor modify it.
type AppliedHandler func(obj *metav1.PartialObjectMetadata)

// appliedWatch keeps, per resource of the objects flotilla applied to a
// member, an informer of those objects, selected by flotilla's ownership
// labels, so a change to one (its status most often) is known as it
// happens instead of at the next read-back, and the changed object is at
// hand without a request to the member (AppliedObject): a burst of member
// changes costs the member one watch event each, not a GET each. The
// objects are kept whole but for their managed fields, which are cut down
// to who applied them (appliedObject). A resource's informer starts on the
// first WatchApplied for it and stops once none came for idle, or with the
// client. It is safe for concurrent use.
type appliedWatch struct {
	dyn  dynamic.Interface
	idle time.Duration

	mu      sync.Mutex
	stopped bool
	kinds   map[schema.GroupVersionResource]*watchedApplied
	running sync.WaitGroup
}

// watchedApplied is the informer of one resource's applied objects, or the
// record that the member refused to let them be watched.
type watchedApplied struct {
	kind    *watchedKind // nil once refused
	cancel  context.CancelFunc
	used    time.Time
	timer   *time.Timer
	refused bool
}

func newAppliedWatch(dyn dynamic.Interface, idle time.Duration) *appliedWatch {
	return &appliedWatch{dyn: dyn, idle: idle, kinds: map[schema.GroupVersionResource]*watchedApplied{}}
}

// WatchApplied makes sure the member's objects of resource gvr that match
// the label selector are watched, telling notify of each change after the
// first list (notify is taken from the call that starts the watch), and
// reports whether that watch is synced and its last list or watch
// succeeded (only then has every change since the first list been told),
// and whether it is still syncing, without a failure yet (a change made
// now may then go untold: read again shortly). A client that does not
// watch (CacheOptions.Watch off), or a member that refuses to let gvr be
// watched (Forbidden: it is asked again after the idle time), reports
// neither; the caller then reads the objects as it did without a watch.
func (c *Client) WatchApplied(gvr schema.GroupVersionResource, selector string, notify AppliedHandler) (synced, syncing bool) {
	if c.applied == nil {
		return false, false
	}
	return c.applied.watch(gvr, selector, notify)
}

func (w *appliedWatch) watch(gvr schema.GroupVersionResource, selector string, notify AppliedHandler) (synced, syncing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false, false
	}
	k, ok := w.kinds[gvr]
	if !ok {
		k = w.start(gvr, selector, notify)
	}
	k.used = time.Now()
	if k.refused {
		return false, false
	}
	k.kind.mu.Lock()
	err, synced := k.kind.err, k.kind.informer.HasSynced()
	k.kind.mu.Unlock()
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		// Credentials that may read but not list or watch, or a kind
		// that cannot be listed: nothing to wait for.
		k.cancel()
		k.kind, k.refused = nil, true
		return false, false
	}
	return err == nil && synced, err == nil && !synced
}

// start runs the informer of gvr; call it with w.mu held.
func (w *appliedWatch) start(gvr schema.GroupVersionResource, selector string, notify AppliedHandler) *watchedApplied {
	ctx, cancel := context.WithCancel(context.Background())
	k := &watchedApplied{cancel: cancel}
	api := w.dyn.Resource(gvr)
	k.kind = runWatchedKind(ctx, &w.running, &unstructured.Unstructured{}, appliedObject, appliedHandler(notify), cache.Indexers{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return api.List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return api.Watch(ctx, o)
		})
	k.timer = time.AfterFunc(w.idle, func() { w.expire(gvr, k) })
	w.kinds[gvr] = k
	return k
}

// expire stops the informer k of gvr when it was not asked for during
// idle, or checks again when it will have been.
func (w *appliedWatch) expire(gvr schema.GroupVersionResource, k *watchedApplied) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kinds[gvr] != k {
		return
	}
	if left := w.idle - time.Since(k.used); left > 0 && !w.stopped {
		k.timer.Reset(left)
		return
	}
	k.cancel()
	delete(w.kinds, gvr)
}

// stop ends the informers, for good. The channel is closed once their
// goroutines have returned.
func (w *appliedWatch) stop() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for gvr, k := range w.kinds {
		k.timer.Stop()
		k.cancel()
		delete(w.kinds, gvr)
	}
	done := make(chan struct{})
	go func() {
		w.running.Wait()
		close(done)
	}()
	return done
}

// appliedHandler tells notify of every change but the adds of the first
// list: whoever starts the watch has just read the objects, and the others
// are read again on their own schedule until the watch has synced.
func appliedHandler(notify AppliedHandler) cache.ResourceEventHandler {
	tell := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok && notify != nil {
			notify(appliedMetadata(u))
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				tell(obj)
			}
		},
		UpdateFunc: func(_, obj any) { tell(obj) },
		DeleteFunc: tell,
	}
}

// fieldsDigestPrefix marks a field set that cutManagedFields replaced by
// its digest, so cutting an object down twice keeps the digest of the set.
// The digest is a JSON string (`"sha256:<hex>"`), as an unstructured
// object holds a field set only as JSON.
const fieldsDigestPrefix = `"sha256:`

// appliedObject is the watch's transform: it cuts an applied object's
// managed fields down to who applied them (cutManagedFields), which no
// status, health or drift check reads, and keeps the rest as the member
// serves it, for AppliedObject. Anything else (a tombstone) is returned as
// it is.
func appliedObject(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	u.SetManagedFields(cutManagedFields(u.GetManagedFields()))
	return u, nil
}

// cutManagedFields keeps of managed fields only the entries of apply
// operations, with the digest of each field set
// (render.FieldSetDigest) in place of the set: enough to tell whether
// anyone touched what a manager applied (AppliedFields), at a fraction of
// the memory.
func cutManagedFields(fields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, f := range fields {
		if f.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		e := metav1.ManagedFieldsEntry{Manager: f.Manager, Operation: f.Operation, Subresource: f.Subresource}
		if f.FieldsV1 != nil {
			e.FieldsV1 = metav1.NewFieldsV1(fieldsDigestPrefix + render.FieldSetDigest(f.FieldsV1) + `"`)
			if strings.HasPrefix(f.FieldsV1.GetRawString(), fieldsDigestPrefix) {
				// Cut down already: an informer may transform an
				// object it holds again.
				e.FieldsV1 = f.FieldsV1
			}
		}
		out = append(out, e)
	}
	return out
}

// appliedMetadata is what an AppliedHandler is told of a held object:
// name, namespace, resourceVersion, UID, labels, the template annotation
// and the cut-down managed fields.
func appliedMetadata(u *unstructured.Unstructured) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
			Labels: u.GetLabels(), ManagedFields: u.GetManagedFields()},
	}
	if v, ok := u.GetAnnotations()[render.AnnotationTemplate]; ok {
		out.Annotations = map[string]string{render.AnnotationTemplate: v}
	}
	return out
}

// AppliedFields answers from the watch of the applied objects of resource
// gvr (WatchApplied) what the watch last saw of the named object:
// render.AppliedFieldsDigest of manager's applied fields, and found false
// when the watch does not hold it (deleted, or without the fleet's labels
// now). ok is false when gvr is not watched, or its watch has not synced or
// failed its last list or watch: the caller then reads the member.
func (c *Client) AppliedFields(gvr schema.GroupVersionResource, namespace, name, manager string) (digest string, found, ok bool) {
	if c.applied == nil {
		return "", false, false
	}
	return c.applied.fields(gvr, namespace, name, manager)
}

func (w *appliedWatch) fields(gvr schema.GroupVersionResource, namespace, name, manager string) (digest string, found, ok bool) {
	u, found, ok := w.held(gvr, namespace, name)
	if !found || !ok {
		return "", found, ok
	}
	if e := render.AppliedEntry(u.GetManagedFields(), manager); e != nil {
		// appliedMetadata put the digest in place of the field set.
		return strings.TrimSuffix(strings.TrimPrefix(e.FieldsV1.GetRawString(), fieldsDigestPrefix), `"`), true, true
	}
	return "", true, true
}

// AppliedObject answers from the watch of the applied objects of resource
// gvr (WatchApplied) the named object as the watch last saw it, with its
// managed fields cut down to who applied them: a copy the caller may
// modify. Read after the AppliedHandler was told of a change, it is that
// change or a later one. found and ok are as for AppliedFields.
func (c *Client) AppliedObject(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, found, ok bool) {
	if c.applied == nil {
		return nil, false, false
	}
	u, found, ok := c.applied.held(gvr, namespace, name)
	if !found || !ok {
		return nil, found, ok
	}
	return u.DeepCopy(), true, true
}

// held is the watch's copy of the named object of gvr; found is false when
// the watch does not hold it, ok false when gvr is not watched, or its
// watch has not synced or failed its last list or watch.
func (w *appliedWatch) held(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, found, ok bool) {
	w.mu.Lock()
	var kind *watchedKind
	if k, watched := w.kinds[gvr]; watched && !k.refused {
		kind = k.kind
	}
	w.mu.Unlock()
	if kind == nil {
		return nil, false, false
	}
	kind.mu.Lock()
	err := kind.err
	kind.mu.Unlock()
	if err != nil || !kind.informer.HasSynced() {
		return nil, false, false
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	item, exists, err := kind.informer.GetStore().GetByKey(key)
	if err != nil {
		return nil, false, false
	}
	u, isObject := item.(*unstructured.Unstructured)
	if !exists || !isObject {
		return nil, false, true
	}
	return u, true, true
}
