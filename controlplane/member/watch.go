package member

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

// errWatchStopped is summaryWatch.summarize's answer once the watch was
// stopped (its client replaced or invalidated, or watching refused).
var errWatchStopped = errors.New("member watch stopped")

// syncPoll is how often summarize checks whether the informers have synced.
const syncPoll = 50 * time.Millisecond

// summaryWatch keeps a member's nodes and non-terminal pods in two
// informers, each object cut down to what the summary needs, so the
// summaries are computed from memory instead of listing the member on every
// probe. The informers start on the first summarize (the member answered
// its probe and discovery) and stop with stop, or when the member refuses to
// be watched (Forbidden), after which its client lists as without a watch.
// The same events keep an estimator.Nodes (nodes), which the per-node
// replica estimator and the resource modelings read. It is safe for
// concurrent use.
type summaryWatch struct {
	kube kubernetes.Interface

	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc // nil until started
	ctx     context.Context
	nodes   *watchedKind
	pods    *watchedKind
	// index and owned are fed by the informers' event handlers; they are
	// replaced with them.
	index   *estimator.Nodes
	owned   *estimator.Pods
	running sync.WaitGroup // the informers
}

// watchedKind is one informer and the outcome of its last list or watch.
type watchedKind struct {
	informer cache.SharedIndexInformer

	mu  sync.Mutex
	err error // the last list or watch failure; nil once a later one succeeded
}

func newSummaryWatch(kube kubernetes.Interface) *summaryWatch {
	return &summaryWatch{kube: kube}
}

// summarize is the node and resource summaries from the informers, waiting
// within ctx for their first sync. A member whose watch cannot sync, or whose
// last list or watch failed, is reported as a failed list is:
// "list nodes: …" with no summaries, "list pods: …" with no resource
// summary.
func (w *summaryWatch) summarize(ctx context.Context) (*api.NodeSummary, *api.ResourceSummary, error) {
	nodes, pods, wctx, err := w.start()
	if err != nil {
		return nil, nil, err
	}
	// Both informers sync side by side; a failure shows as the timeout.
	_ = wait.PollUntilContextCancel(ctx, syncPoll, true, func(context.Context) (bool, error) {
		if wctx.Err() != nil {
			return false, errWatchStopped
		}
		return nodes.informer.HasSynced() && pods.informer.HasSynced(), nil
	})
	if wctx.Err() != nil {
		return nil, nil, errWatchStopped
	}
	nodesErr, podsErr := nodes.failure(ctx), pods.failure(ctx)
	if apierrors.IsForbidden(nodesErr) || apierrors.IsForbidden(podsErr) {
		// Credentials that may list but not watch: this client lists on
		// every probe instead, as without a watch.
		w.stop()
		return nil, nil, errWatchStopped
	}
	if nodesErr != nil {
		return nil, nil, fmt.Errorf("list nodes: %w", nodesErr)
	}
	s := newSummary()
	for _, obj := range nodes.informer.GetStore().List() {
		s.addNode(obj.(*corev1.Node))
	}
	if podsErr != nil {
		return s.nodeSummary(), nil, fmt.Errorf("list pods: %w", podsErr)
	}
	for _, obj := range pods.informer.GetStore().List() {
		p := obj.(*podUsage)
		s.addUsage(p.NodeName, p.Phase, func() corev1.ResourceList { return p.Requests })
	}
	return s.nodeSummary(), s.resourceSummary(), nil
}

// start starts the informers unless they run; it returns them and the
// context they run under.
func (w *summaryWatch) start() (nodes, pods *watchedKind, ctx context.Context, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return nil, nil, nil, errWatchStopped
	}
	if w.cancel != nil {
		return w.nodes, w.pods, w.ctx, nil
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.index, w.owned = estimator.NewNodes(), estimator.NewPods()
	nodeAPI, podAPI := w.kube.CoreV1().Nodes(), w.kube.CoreV1().Pods(metav1.NamespaceAll)
	w.nodes = w.watchKind(&corev1.Node{}, summaryNode, nodeHandler(w.index),
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodeAPI.List(ctx, o) },
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return nodeAPI.Watch(ctx, o) })
	w.pods = w.watchKind(&corev1.Pod{}, summaryPod, podHandler(w.index, w.owned),
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = nonTerminalPods
			return podAPI.List(ctx, o)
		},
		func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = nonTerminalPods
			return podAPI.Watch(ctx, o)
		})
	return w.nodes, w.pods, w.ctx, nil
}

// stop ends the informers, for good. The channel is closed once their
// goroutines have returned and their watches are closed.
func (w *summaryWatch) stop() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.cancel != nil {
		w.cancel()
	}
	done := make(chan struct{})
	go func() {
		w.running.Wait()
		close(done)
	}()
	return done
}

// watchKind runs an informer over list and watch until the watch stops, its
// objects cut down by transform and handed to handler, and records the
// outcome of each list and watch. Call it with w.mu held.
func (w *summaryWatch) watchKind(example runtime.Object, transform cache.TransformFunc, handler cache.ResourceEventHandler,
	list cache.ListWithContextFunc, watchFn cache.WatchFuncWithContext,
) *watchedKind {
	return runWatchedKind(w.ctx, &w.running, example, transform, handler, cache.Indexers{}, list, watchFn)
}

// runWatchedKind runs an informer under ctx, counted in running, with the
// given transform, handler and indexers, and records the outcome of each
// list and watch.
func runWatchedKind(ctx context.Context, running *sync.WaitGroup, example runtime.Object, transform cache.TransformFunc,
	handler cache.ResourceEventHandler, indexers cache.Indexers, list cache.ListWithContextFunc, watchFn cache.WatchFuncWithContext,
) *watchedKind {
	k := &watchedKind{}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := list(ctx, o)
			k.record(err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := watchFn(ctx, o)
			k.record(err)
			return w, err
		},
	}
	k.informer = cache.NewSharedIndexInformer(lw, example, 0, indexers)
	// Neither call fails on an informer that has not started.
	_ = k.informer.SetTransform(transform)
	// Registered before the informer runs, so the handler sees every object.
	_, _ = k.informer.AddEventHandler(handler)
	_ = k.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		// An expired watch is the normal end of one; the reflector lists
		// again at once.
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) && ctx.Err() == nil {
			k.record(err)
		}
	})
	running.Go(func() { k.informer.RunWithContext(ctx) })
	return k
}

// failed reports whether the last list or watch failed.
func (k *watchedKind) failed() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err != nil
}

func (k *watchedKind) record(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.err = err
}

// failure is why the informer cannot be trusted now: its last list or
// watch failed, or it has not synced within ctx.
func (k *watchedKind) failure(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.err != nil:
		return k.err
	case !k.informer.HasSynced():
		return fmt.Errorf("watch not synced in time: %w", context.Cause(ctx))
	}
	return nil
}

// summaryNode keeps of a node what summary.addNode and the per-node
// estimator read: its name, labels, taints, Ready condition, unschedulable
// flag and allocatable resources.
func summaryNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil // a tombstone
	}
	out := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, ResourceVersion: n.ResourceVersion},
		Spec:       corev1.NodeSpec{Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints},
		Status:     corev1.NodeStatus{Allocatable: n.Status.Allocatable},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
			break
		}
	}
	return out, nil
}

// podUsage is all a pod informer keeps of a pod: its key, the node it is
// bound to, its phase and its requests as kube-scheduler computes them, and
// for the descheduler its controller's UID and since when kube-scheduler
// finds it unschedulable.
type podUsage struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	NodeName           string
	Phase              corev1.PodPhase
	Requests           corev1.ResourceList
	Controller         types.UID
	UnschedulableSince time.Time
}

// DeepCopyObject copies the usage, for runtime.Object.
func (p *podUsage) DeepCopyObject() runtime.Object {
	out := *p
	out.ObjectMeta = *p.ObjectMeta.DeepCopy()
	out.Requests = p.Requests.DeepCopy()
	return &out
}

// summaryPod cuts a pod down to its podUsage. An object that is already one
// (a resync) or a tombstone is returned as it is.
func summaryPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	u := &podUsage{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion},
		NodeName:   p.Spec.NodeName,
		Phase:      p.Status.Phase,
		Requests:   podRequests(p),
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		u.Controller = ref.UID
	}
	if since, ok := estimator.UnschedulableSince(&p.Status); ok {
		u.UnschedulableSince = since
	}
	return u, nil
}

// nodes is the per-node index of the member when the informers have synced
// and their last list and watch succeeded; nil otherwise (not started,
// stopped, syncing or failing), when the caller falls back to the summary.
func (w *summaryWatch) nodesIndex() *estimator.Nodes {
	w.mu.Lock()
	nodes, pods, index, running := w.nodes, w.pods, w.index, w.cancel != nil && !w.stopped
	w.mu.Unlock()
	if !running || !nodes.healthy() || !pods.healthy() {
		return nil
	}
	return index
}

// ownedIndex is the member's pods by controller, under the same conditions
// as nodesIndex; nil otherwise.
func (w *summaryWatch) ownedIndex() *estimator.Pods {
	w.mu.Lock()
	pods, owned, running := w.pods, w.owned, w.cancel != nil && !w.stopped
	w.mu.Unlock()
	if !running || !pods.healthy() {
		return nil
	}
	return owned
}

// healthy says the informer has synced and its last list or watch did not
// fail.
func (k *watchedKind) healthy() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err == nil && k.informer.HasSynced()
}

// nodeHandler keeps index's nodes.
func nodeHandler(index *estimator.Nodes) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				index.SetNode(n)
			}
		},
		UpdateFunc: func(_, obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				index.SetNode(n)
			}
		},
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				index.DeleteNode(key)
			}
		},
	}
}

// podHandler keeps index's and owned's pods.
func podHandler(index *estimator.Nodes, owned *estimator.Pods) cache.ResourceEventHandler {
	set := func(obj any) {
		if p, ok := obj.(*podUsage); ok {
			index.SetPod(p.Namespace+"/"+p.Name, p.NodeName, p.Phase, p.Requests)
			owned.SetPod(estimator.PodState{Namespace: p.Namespace, Name: p.Name, Controller: p.Controller,
				NodeName: p.NodeName, Phase: p.Phase, UnschedulableSince: p.UnschedulableSince})
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { set(obj) },
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				index.DeletePod(key)
				owned.DeletePod(key)
			}
		},
	}
}
