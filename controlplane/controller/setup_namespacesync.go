package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"
)

// setupNamespaceSync registers the namespace sync controller with mgr.
func setupNamespaceSync(mgr ctrl.Manager, opts Options) error {
	return (&namespaceSync{client: mgr.GetClient(), opts: opts}).setup(mgr)
}
