package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// setupBinding registers the binding controller with mgr; templates
// carries the detectors' template events.
func setupBinding(mgr ctrl.Manager, opts Options, now func() time.Time, events recorder, templates <-chan event.GenericEvent) error {
	return (&bindingReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, now: now, events: events}).setup(mgr, templates)
}
