package cronfederatedhpa

import (
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// wakeBuffer is how many timer wake-ups wait for the controller's queue.
const wakeBuffer = 256

// Setup registers the CronFederatedHPA controller with mgr. Its rules run
// on opts.CronClock.
func Setup(mgr ctrl.Manager, opts shared.Options, rec shared.Recorder) error {
	opts = opts.WithDefaults()
	r := &reconciler{
		client: mgr.GetClient(), opts: opts, clock: opts.CronClock, rec: rec,
		wake: make(chan event.GenericEvent, wakeBuffer), timers: &timers{m: map[client.ObjectKey]stopper{}},
	}
	return ctrl.NewControllerManagedBy(mgr).Named("cron-federated-hpa").
		For(&autoscalingv1.CronFederatedHPA{}).
		WatchesRawSource(source.Channel(r.wake, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// stopper is a timer that can be stopped (clock.Timer).
type stopper interface{ Stop() bool }

// timers holds the one wake-up timer of each CronFederatedHPA.
type timers struct {
	mu sync.Mutex
	m  map[client.ObjectKey]stopper
}

// set replaces key's timer with t (nil: none).
func (ts *timers) set(key client.ObjectKey, t stopper) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if old := ts.m[key]; old != nil {
		old.Stop()
	}
	if t == nil {
		delete(ts.m, key)
		return
	}
	ts.m[key] = t
}
