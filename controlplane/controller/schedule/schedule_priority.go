package schedule

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// Karmada's scheduler orders its queue by the binding's resolved
// spec.schedulePriority.priority (higher first, FIFO within a priority).
// controller-runtime's priority queue, the default queue of every
// controller, does the same: the scheduler's handlers add each binding with
// its priority, and a requeue keeps the priority it was handed out with.

// bindingPriority is a binding's place in the scheduling queue.
func bindingPriority(rb *workv1.ResourceBinding) int {
	if rb.Spec.SchedulePriority == nil {
		return 0
	}
	return int(rb.Spec.SchedulePriority.Priority)
}

// enqueueByPriority adds bindings to q at their priority; a queue that is
// not a priority queue gets them in arrival order.
func enqueueByPriority(q workqueue.TypedRateLimitingInterface[reconcile.Request], bindings ...*workv1.ResourceBinding) {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	for _, rb := range bindings {
		req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)}
		if !ok {
			q.Add(req)
			continue
		}
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(bindingPriority(rb))}, req)
	}
}

// bindingsByPriority enqueues the binding an event is about at its priority.
func bindingsByPriority() handler.EventHandler {
	add := func(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		switch b := obj.(type) {
		case *workv1.ResourceBinding:
			enqueueByPriority(q, b)
		case *workv1.ClusterResourceBinding:
			// Its request has no namespace, as forBindings' have.
			enqueueByPriority(q, &workv1.ResourceBinding{ObjectMeta: b.ObjectMeta, Spec: b.Spec})
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}

// affectedBindingsByPriority enqueues, each at its priority, the bindings
// whose placement a Cluster event can change (clusterCouldMove), not every
// binding of the fleet.
func affectedBindingsByPriority(c client.Reader) handler.EventHandler {
	some := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		states := make([]*clusterv1.Cluster, 0, len(objs))
		for _, o := range objs {
			if c, ok := o.(*clusterv1.Cluster); ok {
				states = append(states, c)
			}
		}
		// Read as cached, not copied: at 10,000 bindings a copy of each per
		// Cluster event was most of the work, and the loop only reads them.
		items, err := shared.ListAllBindings(ctx, c, client.UnsafeDisableDeepCopy)
		if err != nil {
			// The informer cache answers; an error means it is gone.
			ctrl.LoggerFrom(ctx).Error(err, "list bindings")
			return
		}
		bindings := make([]*workv1.ResourceBinding, 0, len(items))
		for i := range items {
			if len(states) == 0 || clusterCouldMove(&items[i], states...) {
				bindings = append(bindings, &items[i])
			}
		}
		metrics.ClusterRequeues.Add(float64(len(bindings)))
		enqueueByPriority(q, bindings...)
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			// The Clusters of the watch's initial list bring nothing: the
			// binding watches' own initial lists queue every binding. Looking
			// through every binding for each of them kept a restarted
			// scheduler from starting for 100 s at 1,000 Clusters and 10,000
			// bindings, its watches not synced until every Cluster was
			// handled (issue 20).
			if e.IsInInitialList {
				return
			}
			some(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			some(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			some(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			some(ctx, q, e.Object)
		},
	}
}

// heldByQuota enqueues, each at its priority, the bindings of a quota's
// namespace that a quota holds back (Scheduled=False, QuotaExceeded).
func heldByQuota(c client.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list workv1.ResourceBindingList
		if err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list bindings", "namespace", obj.GetNamespace())
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if c := apimeta.FindStatusCondition(list.Items[i].Status.Conditions, api.ConditionScheduled); c != nil && c.Reason == ReasonQuotaExceeded {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
			}
		}
		return out
	})
}
