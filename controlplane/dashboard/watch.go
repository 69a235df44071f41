package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
)

// watchedEvent is one kind of incident event the events page shows: the
// reason a reconciler records and the controller it reports as
// (events.k8s.io reportingController, flotilla-<reconciler>). The Event
// field selector matches both exactly, so the host sends only these and
// never the fleet's other events.
type watchedEvent struct {
	controller, reason string
	// Class groups reasons on the page.
	class string
}

// watchedEvents are the failovers, evictions, refused or failed applies
// (conflicts among them), halted rollouts and clusters turning not ready.
// The reasons are the control plane's (shared.EventReason*;
// TestWatchedEventsAreTheControlPlanes keeps them in step).
var watchedEvents = []watchedEvent{
	{"flotilla-scheduler", "ClusterFailover", "failover"},
	{"flotilla-application-failover", "ApplicationFailover", "failover"},
	{"flotilla-binding", "EvictWorkloadFromClusterSucceed", "eviction"},
	{"flotilla-descheduler", "DescheduleBindingSucceed", "eviction"},
	{"flotilla-execution", "SyncFailed", "apply"},
	{"flotilla-binding", "RolloutHalted", "rollout"},
	{"flotilla-cluster-status", "ClusterNotReady", "cluster"},
}

// DefaultEventLimit is how many events of each watched reason the
// dashboard keeps, the newest.
const DefaultEventLimit = 500

// ClusterLeaseNamespace holds the Leases the agents of Pull clusters renew
// (the control plane's shared.ClusterLeaseNamespace): it follows the API
// groups apis.Use chose at start.
func ClusterLeaseNamespace() string { return apis.Current().ClusterLeaseNamespace() }

// Watches are the dashboard's own watches of the host, besides the
// control plane's cache: flotilla's incident events, each reason kept to
// its newest limit, and the Pull clusters' Leases of one namespace.
type Watches struct {
	limit     int
	events    []*boundedStore
	leases    *boundedStore
	reflector []*toolscache.Reflector
}

// NewWatches prepares the watches of the host cfg and httpClient reach,
// keeping at most limit events per watched reason (DefaultEventLimit when
// 0). Nothing is read before Start.
func NewWatches(cfg *rest.Config, httpClient *http.Client, limit int) (*Watches, error) {
	if httpClient == nil {
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return nil, fmt.Errorf("dashboard: host client: %w", err)
		}
		httpClient = c
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("dashboard: host clientset: %w", err)
	}
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	w := &Watches{limit: limit}
	for _, we := range watchedEvents {
		selector := fields.AndSelectors(
			fields.OneTermEqualSelector("reportingComponent", we.controller),
			fields.OneTermEqualSelector("reason", we.reason)).String()
		store := newBoundedStore(limit, eventTime)
		events := kube.CoreV1().Events(metav1.NamespaceAll)
		lw := &toolscache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.FieldSelector = selector
				return events.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.FieldSelector = selector
				return events.Watch(ctx, o)
			},
		}
		w.events = append(w.events, store)
		w.reflector = append(w.reflector, toolscache.NewReflectorWithOptions(lw, &corev1.Event{}, store,
			toolscache.ReflectorOptions{Name: "dashboard events " + we.reason}))
	}
	leases := kube.CoordinationV1().Leases(ClusterLeaseNamespace())
	// One Lease per Pull cluster: the bound is a safety net, not a window.
	w.leases = newBoundedStore(100000, func(o metav1.Object) time.Time { return o.GetCreationTimestamp().Time })
	w.reflector = append(w.reflector, toolscache.NewReflectorWithOptions(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return leases.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return leases.Watch(ctx, o)
		},
	}, &coordinationv1.Lease{}, w.leases, toolscache.ReflectorOptions{Name: "dashboard cluster leases"}))
	return w, nil
}

// Start runs the watches until ctx ends.
func (w *Watches) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, r := range w.reflector {
		wg.Go(func() { r.RunWithContext(ctx) })
	}
	wg.Wait()
	return nil
}

// NeedLeaderElection is false: every replica serves its dashboard.
func (w *Watches) NeedLeaderElection() bool { return false }

// Limit is how many events of each watched reason are kept.
func (w *Watches) Limit() int {
	if w == nil {
		return 0
	}
	return w.limit
}

// HasSynced reports whether every watch has listed once.
func (w *Watches) HasSynced() bool {
	if w == nil {
		return true
	}
	for _, s := range append(w.events, w.leases) {
		if !s.synced() {
			return false
		}
	}
	return true
}

// Events are the kept events, newest first.
func (w *Watches) Events() []*corev1.Event {
	if w == nil {
		return nil
	}
	var out []*corev1.Event
	for _, s := range w.events {
		for _, o := range s.list() {
			out = append(out, o.(*corev1.Event))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return eventTime(out[i]).After(eventTime(out[j])) })
	return out
}

// Lease is the Lease of a Pull cluster, or nil.
func (w *Watches) Lease(cluster string) *coordinationv1.Lease {
	if w == nil {
		return nil
	}
	o, ok := w.leases.get(ClusterLeaseNamespace() + "/" + cluster)
	if !ok {
		return nil
	}
	return o.(*coordinationv1.Lease)
}

// eventTime is when an event last happened: the series' last observation,
// else its last timestamp, its event time, its creation.
func eventTime(o metav1.Object) time.Time {
	e, ok := o.(*corev1.Event)
	if !ok {
		return o.GetCreationTimestamp().Time
	}
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// boundedStore is a reflector's store that keeps at most limit objects,
// dropping the oldest by age when a new one would exceed it: a flood of
// events costs the dashboard limit objects, not the flood.
type boundedStore struct {
	mu      sync.RWMutex
	limit   int
	age     func(metav1.Object) time.Time
	items   map[string]metav1.Object
	hasList bool
}

var _ toolscache.ReflectorStore = (*boundedStore)(nil)

func newBoundedStore(limit int, age func(metav1.Object) time.Time) *boundedStore {
	return &boundedStore{limit: limit, age: age, items: map[string]metav1.Object{}}
}

func storeKey(obj any) (string, metav1.Object, error) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return "", nil, fmt.Errorf("dashboard store: %w", err)
	}
	return m.GetNamespace() + "/" + m.GetName(), m, nil
}

// Add keeps obj, then drops the oldest objects past the limit.
func (s *boundedStore) Add(obj any) error {
	k, m, err := storeKey(obj)
	if err != nil {
		return err
	}
	m.SetManagedFields(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[k] = m
	s.trim()
	return nil
}

// Update is Add.
func (s *boundedStore) Update(obj any) error { return s.Add(obj) }

// Delete forgets obj.
func (s *boundedStore) Delete(obj any) error {
	k, _, err := storeKey(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, k)
	return nil
}

// Replace keeps the newest limit objects of list.
func (s *boundedStore) Replace(list []any, _ string) error {
	items := make(map[string]metav1.Object, min(len(list), s.limit+1))
	for _, obj := range list {
		k, m, err := storeKey(obj)
		if err != nil {
			return err
		}
		m.SetManagedFields(nil)
		items[k] = m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items, s.hasList = items, true
	s.trim()
	return nil
}

// Resync does nothing: the store has no handlers to replay to.
func (s *boundedStore) Resync() error { return nil }

// trim drops the oldest objects past the limit; s.mu is held.
func (s *boundedStore) trim() {
	over := len(s.items) - s.limit
	if over <= 0 {
		return
	}
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.age(s.items[keys[i]]), s.age(s.items[keys[j]])
		if !a.Equal(b) {
			return a.Before(b)
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:over] {
		delete(s.items, k)
	}
}

func (s *boundedStore) list() []metav1.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]metav1.Object, 0, len(s.items))
	for _, o := range s.items {
		out = append(out, o)
	}
	return out
}

func (s *boundedStore) get(key string) (metav1.Object, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.items[key]
	return o, ok
}

func (s *boundedStore) synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hasList
}
