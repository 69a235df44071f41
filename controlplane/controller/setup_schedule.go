package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// setupScheduler registers the scheduler with mgr.
func setupScheduler(mgr ctrl.Manager, opts Options, now func() time.Time, events recorder) error {
	return (&schedulerReconciler{client: mgr.GetClient(), opts: opts, now: now, events: events}).setup(mgr)
}
