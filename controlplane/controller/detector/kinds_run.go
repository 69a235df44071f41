package detector

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the template kinds' detectors, on the control plane's
// /metrics. A kind whose CRD was deleted shows detector 0 and watches 0:
// its detector has stopped and left no event handler on the host's
// informers; installed again, it shows 1 and the same number of watches as
// before.
var (
	detectorRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_template_kind_detector",
		Help: "1 while the detector of a template kind runs, 0 once it has stopped (its kind is no longer served).",
	}, []string{"group", "kind"})
	detectorWatches = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "flotilla_template_kind_watches",
		Help: "Event handlers the detector of a template kind holds on the host's informers.",
	}, []string{"group", "kind"})
)

func init() {
	metrics.Registry.MustRegister(detectorRunning, detectorWatches)
}

// kindRun is the running detector of one template kind.
type kindRun struct {
	cancel context.CancelFunc
	// done is closed once the detector has stopped and its informer is
	// gone.
	done chan struct{}
}

// launch runs the detector of s until its kind stops or ctx ends. A kind
// whose previous run is still stopping waits for it first, so that run's
// informer removal cannot take the new run's informer with it. Callers
// hold k.refreshing.
func (k *KindRegistry) launch(ctx context.Context, s servedKind) error {
	gk := s.GVK.GroupKind()
	if prev, ok := k.runs[gk]; ok {
		prev.cancel()
		<-prev.done
	}
	kctx, cancel := context.WithCancel(ctx)
	r, err := k.build(kctx, s.GVK, s.namespaced)
	if err != nil {
		cancel()
		return err
	}
	run := &kindRun{cancel: cancel, done: make(chan struct{})}
	if k.runs == nil {
		k.runs = map[schema.GroupKind]*kindRun{}
	}
	k.runs[gk] = run
	detectorRunning.WithLabelValues(gk.Group, gk.Kind).Set(1)
	k.logger.Info("template kind detector started", "kind", s.GVK.String())
	go func() {
		defer close(run.done)
		if err := r.Start(kctx); err != nil && kctx.Err() == nil {
			// It failed by itself (its informers never synced): the
			// next refresh starts it again.
			k.logger.Error(err, "template kind detector failed", "kind", s.GVK.String())
			k.mu.Lock()
			if k.active[gk] == s {
				delete(k.active, gk)
			}
			k.mu.Unlock()
		}
		cancel()
		// Nothing reads the kind any more: the detector has stopped, and
		// the other controllers check the registry before they read a
		// template.
		if k.forget != nil {
			k.forget(s.GVK)
		}
		detectorRunning.WithLabelValues(gk.Group, gk.Kind).Set(0)
		k.logger.Info("template kind detector stopped", "kind", s.GVK.String())
	}()
	return nil
}

// retire stops the detector of a kind the host no longer serves and
// forgets the kind, so bindings naming it are refused until it is served
// again. Callers hold k.refreshing.
func (k *KindRegistry) retire(gk schema.GroupKind) {
	k.mu.Lock()
	delete(k.active, gk)
	k.mu.Unlock()
	run, ok := k.runs[gk]
	if !ok {
		return
	}
	run.cancel()
	if k.retired == nil {
		return
	}
	// The kind's bindings are collected once its detector has stopped,
	// so it cannot write one again.
	go func() {
		<-run.done
		ctx, cancel := context.WithTimeout(context.Background(), retiredCollectTimeout)
		defer cancel()
		if err := k.retired(ctx, gk); err != nil {
			k.logger.Error(err, "collect the bindings of a kind no longer served", "kind", gk.String())
		}
	}()
}

// retiredCollectTimeout bounds the collection of a retired kind's
// bindings; the orphan collector looks at each binding again on restart.
const retiredCollectTimeout = time.Minute

// kindCache is the host's cache as one kind's detector sees it: every
// event handler its watches add to an informer (the shared ones of the
// policies and bindings as well as the kind's own) is removed again when
// the kind stops, which source.Kind itself never does.
type kindCache struct {
	cache.Cache
	ctx context.Context
	gk  schema.GroupKind
}

// GetInformer returns the shared informer wrapped so that its event
// handlers are removed when the kind stops.
func (c kindCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return kindInformer{Informer: i, c: c}, nil
}

// kindInformer is a shared informer whose handlers last as long as a kind.
type kindInformer struct {
	cache.Informer
	c kindCache
}

// AddEventHandler adds h until the kind stops.
func (i kindInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(h, toolscache.HandlerOptions{})
}

// AddEventHandlerWithOptions adds h until the kind stops.
func (i kindInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	if err := i.c.ctx.Err(); err != nil {
		return nil, err
	}
	reg, err := i.Informer.AddEventHandlerWithOptions(h, opts)
	if err != nil {
		return nil, err
	}
	watches := detectorWatches.WithLabelValues(i.c.gk.Group, i.c.gk.Kind)
	watches.Inc()
	// Runs at once if the kind stopped meanwhile.
	context.AfterFunc(i.c.ctx, func() {
		// A stopped informer (the kind's own, removed) has dropped its
		// handlers already; removing one again is harmless.
		_ = i.Informer.RemoveEventHandler(reg)
		watches.Dec()
	})
	return reg, nil
}

// forgetInformer removes a template kind's informer from the host's cache.
func forgetInformer(c cache.Cache) func(gvk schema.GroupVersionKind) {
	return func(gvk schema.GroupVersionKind) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		_ = c.RemoveInformer(context.Background(), u)
	}
}
