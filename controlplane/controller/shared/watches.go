package shared

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

// ClusterSchedulingChanged passes the Cluster updates that can change a
// placement, so that the status the cluster status controller writes after
// every probe does not reschedule every binding of the fleet:
//   - spec (taints, provider, region, zones…), seen as a new generation;
//   - labels, which affinities select on;
//   - the Ready and CompleteAPIEnablements conditions flipping, and the API
//     enablements themselves (the API enablement filter);
//   - the node count and the allocatable resources, the capacity the replica
//     estimator divides.
//
// Condition messages and times, the Kubernetes version, and what pods
// request (allocated, allocating) change without changing where a
// template belongs, as in Karmada's scheduler, which reschedules on label
// and generation changes only. A binding that found no cluster is retried on
// its own (unschedulableRetry), so capacity freed by pods is still noticed.
var ClusterSchedulingChanged = predicate.Funcs{
	UpdateFunc: func(ev event.UpdateEvent) bool {
		oldC, ok1 := ev.ObjectOld.(*clusterv1.Cluster)
		newC, ok2 := ev.ObjectNew.(*clusterv1.Cluster)
		return !ok1 || !ok2 || schedulingChanged(oldC, newC)
	},
}

func schedulingChanged(oldC, newC *clusterv1.Cluster) bool {
	if oldC.Generation != newC.Generation || !equality.Semantic.DeepEqual(oldC.Labels, newC.Labels) ||
		!newC.DeletionTimestamp.Equal(oldC.DeletionTimestamp) {
		return true
	}
	o, n := &oldC.Status, &newC.Status
	for _, t := range []string{api.ClusterConditionReady, api.ClusterConditionCompleteAPIEnablements} {
		if conditionStatus(o, t) != conditionStatus(n, t) {
			return true
		}
	}
	if !equality.Semantic.DeepEqual(o.APIEnablements, n.APIEnablements) || !equality.Semantic.DeepEqual(o.NodeSummary, n.NodeSummary) {
		return true
	}
	var oa, na any
	if o.ResourceSummary != nil {
		oa = []any{o.ResourceSummary.Allocatable, o.ResourceSummary.AllocatableModelings}
	}
	if n.ResourceSummary != nil {
		na = []any{n.ResourceSummary.Allocatable, n.ResourceSummary.AllocatableModelings}
	}
	return !equality.Semantic.DeepEqual(oa, na)
}

// conditionStatus is the status of a condition, "" when it is absent.
func conditionStatus(s *api.ClusterStatus, t string) string {
	if c := apimeta.FindStatusCondition(s.Conditions, t); c != nil {
		return string(c.Status)
	}
	return ""
}

// BindingsOfNamespace maps a namespaced object's event to the bindings of
// its namespace: a namespaced OverridePolicy applies to templates of its
// own namespace only, so it re-renders nothing elsewhere.
func BindingsOfNamespace(c client.Client) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return listBindings(ctx, c, client.InNamespace(obj.GetNamespace()))
	}
}

// AllBindings maps any event to every binding: a cluster's facts or taints,
// or a ClusterOverridePolicy, may change any binding.
func AllBindings(c client.Client) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		return listBindings(ctx, c)
	}
}

func listBindings(ctx context.Context, c client.Client, opts ...client.ListOption) []reconcile.Request {
	items, err := ListAllBindings(ctx, c, opts...)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list bindings")
		return nil
	}
	out := make([]reconcile.Request, len(items))
	for i := range items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])}
	}
	return out
}
