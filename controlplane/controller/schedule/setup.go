package schedule

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the scheduler with mgr.
func Setup(mgr ctrl.Manager, opts shared.Options, now func() time.Time, events shared.Recorder) error {
	return (&schedulerReconciler{client: mgr.GetClient(), opts: opts, now: now, events: events}).setup(mgr)
}
