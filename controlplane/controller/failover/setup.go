package failover

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the application failover controller
// with mgr.
func Setup(mgr ctrl.Manager, now func() time.Time, events shared.Recorder) error {
	return (&applicationFailoverReconciler{client: mgr.GetClient(), now: now, events: events}).setup(mgr)
}
