package federatedhpa

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// Setup registers the FederatedHPA controller with mgr. It reaches the
// members through ms, the control plane's one member cache.
func Setup(mgr ctrl.Manager, ms *shared.Members, opts shared.Options, now func() time.Time, rec shared.Recorder) error {
	opts = opts.WithDefaults()
	r := &reconciler{
		client: mgr.GetClient(), members: ms, opts: opts, now: now, rec: rec,
		history: map[client.ObjectKey]*history{},
	}
	// Status writes are its own: only spec changes (and the sync period)
	// start a pass.
	return ctrl.NewControllerManagedBy(mgr).Named("federated-hpa").
		For(&autoscalingv1.FederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}
