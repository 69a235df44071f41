package clusterstatus

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the cluster status controller with mgr.
func Setup(mgr ctrl.Manager, ms *shared.Members, opts shared.Options, now func() time.Time, events shared.Recorder) error {
	return (&clusterReconciler{client: mgr.GetClient(), members: ms, leases: mgr.GetAPIReader(), opts: opts, now: now, streaks: map[string]shared.ProbeStreak{}, renewals: map[string]agentLease{}, events: events}).setup(mgr)
}
