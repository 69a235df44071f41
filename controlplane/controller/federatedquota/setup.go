package federatedquota

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the FederatedResourceQuota controller with mgr.
func Setup(mgr ctrl.Manager, opts shared.Options, rec shared.Recorder) error {
	return (&quotaSync{client: mgr.GetClient(), opts: opts, rec: rec}).setup(mgr)
}
