package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// setupApplicationFailover registers the application failover controller
// with mgr.
func setupApplicationFailover(mgr ctrl.Manager, now func() time.Time, events recorder) error {
	return (&applicationFailoverReconciler{client: mgr.GetClient(), now: now, events: events}).setup(mgr)
}
