package schedule

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the scheduler with mgr. members gives the per-node
// estimates of the members the cluster status controller watches.
func Setup(mgr ctrl.Manager, members *shared.Members, opts shared.Options, now func() time.Time, events shared.Recorder) error {
	return (&schedulerReconciler{client: mgr.GetClient(), members: members, opts: opts, now: now, events: events}).setup(mgr)
}
