package failover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// applicationFailoverReconciler is Karmada's application failover controller
// for ResourceBindings: it watches the per-cluster health the execution side
// reports in status.aggregatedStatus and evicts a cluster where the template
// stays Unhealthy past decisionConditions.tolerationSeconds.
type applicationFailoverReconciler struct {
	client client.Client
	now    func() time.Time
	events shared.Recorder
}

func (r *applicationFailoverReconciler) setup(mgr ctrl.Manager) error {
	// Bindings without application failover are skipped, unless they still
	// carry a record to clean up after the policy dropped it.
	relevant := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		rb, ok := shared.BindingView(obj)
		if !ok {
			return false
		}
		_, recorded := rb.Annotations[AnnotationUnhealthySince]
		return applicationFailover(&rb.Spec) != nil || recorded
	})
	return shared.NewBindingController(mgr, "application-failover", builder.WithPredicates(relevant)).Complete(r)
}

// Reconcile looks at one binding's health, keeps the unhealthy-since record
// and evicts the clusters whose toleration ran out, in one write.
func (r *applicationFailoverReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rb workv1.ResourceBinding
	if err := shared.GetBinding(ctx, r.client, req.NamespacedName, &rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !rb.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	since, err := parseUnhealthySince(rb.Annotations)
	if err != nil {
		// Starting the clocks again only delays a failover; the value is
		// rewritten below.
		log.Info("unreadable unhealthy-since record; starting again", "binding", req.String(), "reason", err.Error())
	}
	now := r.now()
	d := decideApplicationFailover(&rb.Spec, rb.Status.AggregatedStatus, since, now)

	orig := rb.DeepCopy()
	for _, cluster := range d.evict {
		// The state is read before the cluster leaves; without it the
		// failover waits, as in Karmada.
		preserved, err := shared.PreservedLabelState(applicationFailover(&rb.Spec).StatePreservation, rb.Status.AggregatedStatus, cluster)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("application failover of binding %s from cluster %s: %w", req, cluster, err)
		}
		gracefulEvictCluster(&rb.Spec, cluster, now, preserved)
	}
	if v := formatUnhealthySince(d.since); v != "" {
		if rb.Annotations == nil {
			rb.Annotations = map[string]string{}
		}
		rb.Annotations[AnnotationUnhealthySince] = v
	} else {
		delete(rb.Annotations, AnnotationUnhealthySince)
	}
	if equality.Semantic.DeepEqual(orig.Spec, rb.Spec) && equality.Semantic.DeepEqual(orig.Annotations, rb.Annotations) {
		return reconcile.Result{RequeueAfter: d.wait}, nil
	}
	// The scheduler and the execution side write spec.clusters and the
	// tasks too: a lost update would resurrect or forget a cluster.
	if err := shared.PatchBinding(ctx, r.client, &rb, orig, true); err != nil {
		if len(d.evict) > 0 {
			return reconcile.Result{}, fmt.Errorf("evict binding %s from %s: %w", req, strings.Join(d.evict, ", "), err)
		}
		return reconcile.Result{}, fmt.Errorf("record unhealthy clusters of binding %s: %w", req, err)
	}
	for _, cluster := range d.evict {
		log.Info("application failover: evicting the template from a cluster where it stayed unhealthy",
			"binding", req.String(), "cluster", cluster, "toleration", toleration(applicationFailover(&orig.Spec)).String())
	}
	if len(d.evict) > 0 {
		r.applicationFailedOver(&rb, d.evict, toleration(applicationFailover(&orig.Spec)))
	}
	return reconcile.Result{RequeueAfter: d.wait}, nil
}
