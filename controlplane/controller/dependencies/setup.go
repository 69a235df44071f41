package dependencies

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the dependencies distributor with mgr.
func Setup(mgr ctrl.Manager, opts shared.Options) error {
	return (&dependenciesDistributor{client: mgr.GetClient(), opts: opts}).setup(mgr)
}
