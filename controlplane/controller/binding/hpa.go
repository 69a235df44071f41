package binding

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// hpaTargets maps an HPA template, or the binding of one, to the binding of
// the workload it scales, so that workload is rendered again when the HPA
// comes, goes, is claimed or changes its target (an update maps the old and
// the new object).
func hpaTargets(c client.Reader) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if rb, ok := obj.(*workv1.ResourceBinding); ok {
			if hoststore.GroupKindOf(rb.Spec.Resource) != interpret.HorizontalPodAutoscalerKind {
				return nil
			}
			hpa, err := shared.ReadTemplate(ctx, c, rb)
			if err != nil || hpa == nil {
				return nil
			}
			obj = hpa
		}
		if key, ok := hoststore.ScaleTarget(obj); ok {
			return []reconcile.Request{{NamespacedName: key}}
		}
		return nil
	}
}
