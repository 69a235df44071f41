package binding

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the binding controller with mgr; templates
// carries the detectors' template events.
func Setup(mgr ctrl.Manager, opts shared.Options, now func() time.Time, events shared.Recorder, templates <-chan event.GenericEvent) error {
	return (&bindingReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, now: now, events: events}).setup(mgr, templates)
}
