package member

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// DefaultEndpointSliceIdle is how long a watching cache keeps the
// EndpointSlice informer of a member namespace that nobody asked for, when
// CacheOptions sets no EndpointSliceIdle.
const DefaultEndpointSliceIdle = 10 * time.Minute

// indexService indexes a namespace's slices by their Service
// (kubernetes.io/service-name).
const indexService = "service"

// SliceHandler is told of every change to a watched member EndpointSlice:
// the member's name and the slice as the informer keeps it (ExportSlice),
// its last known state for a deletion. It must not block nor modify the
// slice.
type SliceHandler func(cluster string, s *discoveryv1.EndpointSlice)

// OnEndpointSlices sets the handler every client of the cache calls on a
// change to an EndpointSlice it watches (Client.EndpointSlices), replacing
// the previous one; nil stops the calls.
func (c *Cache) OnEndpointSlices(h SliceHandler) {
	if h == nil {
		c.slices.Store(nil)
		return
	}
	c.slices.Store(&h)
}

// sliceHandler is the cache's current handler bound to cluster, for a
// client's informers: a handler set after the client was built is used too.
func (c *Cache) sliceHandler(cluster string) func(*discoveryv1.EndpointSlice) {
	return func(s *discoveryv1.EndpointSlice) {
		if h := c.slices.Load(); h != nil {
			(*h)(cluster, s)
		}
	}
}

// sliceWatch keeps, for each member namespace multi-cluster services ask
// about, an informer of that namespace's EndpointSlices, each cut down to
// what an export reads (ExportSlice), so an endpoint change is known as it
// happens and reading the slices costs the member nothing. A namespace's
// informer starts on the first EndpointSlices for it and stops once none
// came for idle, or with the client. It is safe for concurrent use.
type sliceWatch struct {
	kube   kubernetes.Interface
	idle   time.Duration
	notify func(*discoveryv1.EndpointSlice)

	mu      sync.Mutex
	stopped bool
	// listOnly is set once the member refused to be watched: its slices
	// are listed on every call instead.
	listOnly bool
	spaces   map[string]*watchedSpace
	running  sync.WaitGroup
}

// watchedSpace is the informer of one namespace's slices.
type watchedSpace struct {
	kind   *watchedKind
	ctx    context.Context
	cancel context.CancelFunc
	used   time.Time
	timer  *time.Timer
}

// settled is a wait.ConditionWithContextFunc: the informer was stopped,
// has synced, or its last list or watch failed.
func (s *watchedSpace) settled(context.Context) (bool, error) {
	select {
	case <-s.ctx.Done():
		return true, nil
	default:
		return s.kind.failed() || s.kind.informer.HasSynced(), nil
	}
}

func newSliceWatch(kube kubernetes.Interface, idle time.Duration, notify func(*discoveryv1.EndpointSlice)) *sliceWatch {
	return &sliceWatch{kube: kube, idle: idle, notify: notify, spaces: map[string]*watchedSpace{}}
}

// EndpointSlices are the member's EndpointSlices of the Service
// namespace/service (by the kubernetes.io/service-name label), cut down by
// ExportSlice; the caller may modify them. A watching cache keeps them in
// an informer of the namespace, started on the first call and waited for
// within ctx; a namespace whose informer failed its last list or watch is
// watched afresh once (a member that came back is read at once, not after
// the informer's backoff), and its error is returned if that fails too. A
// client that does not watch, or a member that refuses to be watched,
// lists them.
func (c *Client) EndpointSlices(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	if c.slices != nil {
		out, err := c.slices.read(ctx, namespace, service)
		if !errors.Is(err, errWatchStopped) {
			return out, err
		}
	}
	list, err := c.Kubernetes.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{discoveryv1.LabelServiceName: service}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list endpoint slices of service %s/%s: %w", namespace, service, err)
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(list.Items))
	for i := range list.Items {
		s, _ := ExportSlice(&list.Items[i])
		out = append(out, s.(*discoveryv1.EndpointSlice))
	}
	return out, nil
}

// read answers EndpointSlices from the namespace's informer;
// errWatchStopped when the caller must list instead.
func (w *sliceWatch) read(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
	var err error
	for fresh := false; ; fresh = true {
		var s *watchedSpace
		if s, err = w.space(namespace, fresh); err != nil {
			return nil, err
		}
		_ = wait.PollUntilContextCancel(ctx, syncPoll, true, s.settled)
		switch err = s.kind.failure(ctx); {
		case s.ctx.Err() != nil:
			return nil, errWatchStopped
		case apierrors.IsForbidden(err):
			// Credentials that may list but not watch: list from now on.
			w.refuse()
			return nil, errWatchStopped
		case err == nil:
			objs, err := s.kind.informer.GetIndexer().ByIndex(indexService, service)
			if err != nil {
				return nil, fmt.Errorf("read endpoint slices of service %s/%s: %w", namespace, service, err)
			}
			out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
			for _, o := range objs {
				out = append(out, o.(*discoveryv1.EndpointSlice).DeepCopy())
			}
			return out, nil
		case fresh || ctx.Err() != nil:
			return nil, fmt.Errorf("watch endpoint slices of namespace %s: %w", namespace, err)
		}
	}
}

// space returns the namespace's informer, starting it when none runs or
// fresh is set (the running one is stopped first), and marks it used.
func (w *sliceWatch) space(namespace string, fresh bool) (*watchedSpace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.listOnly {
		return nil, errWatchStopped
	}
	if s, ok := w.spaces[namespace]; ok {
		if !fresh {
			s.used = time.Now()
			return s, nil
		}
		s.timer.Stop()
		s.cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &watchedSpace{ctx: ctx, cancel: cancel, used: time.Now()}
	api := w.kube.DiscoveryV1().EndpointSlices(namespace)
	s.kind = runWatchedKind(ctx, &w.running, &discoveryv1.EndpointSlice{}, ExportSlice, w.handler(), cache.Indexers{indexService: serviceOf},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return api.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return api.Watch(ctx, o) })
	s.timer = time.AfterFunc(w.idle, func() { w.expire(namespace, s) })
	w.spaces[namespace] = s
	return s, nil
}

// expire stops the namespace's informer s when it was not used for idle,
// or checks again when it will have been.
func (w *sliceWatch) expire(namespace string, s *watchedSpace) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.spaces[namespace] != s {
		return
	}
	if left := w.idle - time.Since(s.used); left > 0 {
		s.timer.Reset(left)
		return
	}
	s.cancel()
	delete(w.spaces, namespace)
}

// refuse stops every informer and makes the client list from now on.
func (w *sliceWatch) refuse() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listOnly = true
	w.stopSpaces()
}

// stop ends the informers, for good. The channel is closed once their
// goroutines have returned.
func (w *sliceWatch) stop() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.stopSpaces()
	done := make(chan struct{})
	go func() {
		w.running.Wait()
		close(done)
	}()
	return done
}

// stopSpaces cancels every namespace's informer; call it with w.mu held.
func (w *sliceWatch) stopSpaces() {
	for ns, s := range w.spaces {
		s.timer.Stop()
		s.cancel()
		delete(w.spaces, ns)
	}
}

// watched lists the namespaces whose informers run, for tests.
func (w *sliceWatch) watched() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for ns := range w.spaces {
		out[ns] = true
	}
	return out
}

// handler tells notify of every change; a deletion with its last known
// state.
func (w *sliceWatch) handler() cache.ResourceEventHandler {
	tell := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok && w.notify != nil {
			w.notify(s)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { tell(obj) },
		UpdateFunc: func(old, obj any) {
			if o, ok := old.(*discoveryv1.EndpointSlice); ok && o.Labels[discoveryv1.LabelServiceName] != obj.(*discoveryv1.EndpointSlice).Labels[discoveryv1.LabelServiceName] {
				tell(old) // moved to another Service: the old one lost it
			}
			tell(obj)
		},
		DeleteFunc: tell,
	}
}

// serviceOf indexes a slice by its Service.
func serviceOf(obj any) ([]string, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok || s.Labels[discoveryv1.LabelServiceName] == "" {
		return nil, nil
	}
	return []string{s.Labels[discoveryv1.LabelServiceName]}, nil
}

// ExportSlice cuts a member EndpointSlice down to what multi-cluster
// services read: its name, namespace and resourceVersion, its Service and
// managed-by labels, its address type and ports, and each endpoint's
// addresses, conditions, hostname and zone. Managed fields, annotations,
// owner references, pod references and node names are dropped, so an
// informer of a busy namespace holds little. Anything but an
// EndpointSlice (a tombstone) is returned as it is.
func ExportSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	out := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, ResourceVersion: s.ResourceVersion},
		AddressType: s.AddressType,
		Ports:       s.Ports,
	}
	for _, k := range []string{discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy} {
		if v, ok := s.Labels[k]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = v
		}
	}
	if len(s.Endpoints) > 0 {
		out.Endpoints = make([]discoveryv1.Endpoint, len(s.Endpoints))
		for i, e := range s.Endpoints {
			out.Endpoints[i] = discoveryv1.Endpoint{Addresses: e.Addresses, Conditions: e.Conditions, Hostname: e.Hostname, Zone: e.Zone}
		}
	}
	return out, nil
}
