package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// setupDependencies registers the dependencies distributor with mgr.
func setupDependencies(mgr ctrl.Manager, opts Options) error {
	return (&dependenciesDistributor{client: mgr.GetClient(), opts: opts}).setup(mgr)
}
