package namespacesync

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the namespace sync controller with mgr.
func Setup(mgr ctrl.Manager, opts shared.Options) error {
	return (&namespaceSync{client: mgr.GetClient(), opts: opts}).setup(mgr)
}
