package controller

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// setupClusterStatus registers the cluster status controller with mgr.
func setupClusterStatus(mgr ctrl.Manager, ms *members, opts Options, now func() time.Time, events recorder) error {
	return (&clusterReconciler{client: mgr.GetClient(), members: ms, leases: mgr.GetAPIReader(), opts: opts, now: now, streaks: map[string]probeStreak{}, renewals: map[string]agentLease{}, events: events}).setup(mgr)
}
