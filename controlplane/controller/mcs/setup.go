package mcs

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	discoveryv1 "k8s.io/api/discovery/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	networkingv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/networking/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// Setup registers the multi-cluster services controller with mgr. It reads
// members through ms, the connections every reconciler shares, and records
// its events with events. An export is collected again as soon as one of
// its members' EndpointSlices changes (the member cache watches the
// namespaces of exports, and only those, while this controller runs), when
// one of its clusters turns Ready or NotReady, and every resync.
func Setup(mgr ctrl.Manager, ms *shared.Members, opts shared.Options, events shared.Recorder) error {
	r := &reconciler{client: mgr.GetClient(), members: ms, opts: opts, interval: opts.WithDefaults().Resync, events: events}
	var queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
	ms.Cache.OnEndpointSlices(func(cluster string, s *discoveryv1.EndpointSlice) {
		q := queue.Load()
		svc := s.Labels[discoveryv1.LabelServiceName]
		if q == nil || svc == "" || multicluster.Ours(s) {
			// Before the controller starts nothing is watched yet; a
			// slice flotilla imported is never exported.
			return
		}
		(*q).Add(reconcile.Request{NamespacedName: exportBinding(s.Namespace, svc)})
	})
	return ctrl.NewControllerManagedBy(mgr).Named("mcs").
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.WithDefaults().MCSWorkers}).
		For(&workv1.ResourceBinding{}, builder.WithPredicates(predicate.NewPredicateFuncs(mcsBinding))).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(collectedImport),
			builder.WithPredicates(predicate.NewPredicateFuncs(collected))).
		// A Pull agent's report wakes its Service's collection, as a Push
		// member's slice does through the member cache.
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(reportedCollection),
			builder.WithPredicates(predicate.NewPredicateFuncs(reported))).
		// A Work's status (the execution's and the work status
		// controller's patches, several per applied change) is nothing this
		// controller writes or reads: only what it writes wakes it.
		Watches(&workv1.Work{}, handler.EnqueueRequestsFromMapFunc(workImport),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return shared.MCSWork(o.(*workv1.Work)) || shared.CrossClusterWork(o.(*workv1.Work))
			}), workWritten)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.exportsOfCluster), builder.WithPredicates(readinessChanged)).
		// A MultiClusterService's change reaches its consumers and its
		// Service's collection (its providers); so does a change of the
		// Service's binding, which places them.
		Watches(&networkingv1.MultiClusterService{}, handler.EnqueueRequestsFromMapFunc(crossClusterAndCollection)).
		Watches(&workv1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.crossClusterOfService),
			builder.WithPredicates(predicate.NewPredicateFuncs(serviceBinding))).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			queue.Store(&q)
			return nil
		})).
		Complete(r)
}

// exportBinding is the key of the binding of the ServiceExport
// namespace/name.
func exportBinding(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: hoststore.BindingName(multicluster.ServiceExportGK, name)}
}

// workWritten passes a Work's creation and deletion and the updates that
// change what the mcs controller writes of it: its spec (the generation),
// labels, annotations, finalizers, or the start of its deletion.
var workWritten = predicate.Funcs{
	UpdateFunc: func(ev event.UpdateEvent) bool {
		o, n := ev.ObjectOld, ev.ObjectNew
		return o.GetGeneration() != n.GetGeneration() || !maps.Equal(o.GetLabels(), n.GetLabels()) ||
			!maps.Equal(o.GetAnnotations(), n.GetAnnotations()) || !slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	},
}

// readinessChanged passes a Cluster's creation, deletion and the updates
// that flip its Ready condition: what decides whether it contributes
// endpoints.
var readinessChanged = predicate.Funcs{
	UpdateFunc: func(ev event.UpdateEvent) bool {
		o, ok1 := ev.ObjectOld.(*clusterv1.Cluster)
		n, ok2 := ev.ObjectNew.(*clusterv1.Cluster)
		return !ok1 || !ok2 || readyOf(o) != readyOf(n) || !o.DeletionTimestamp.Equal(n.DeletionTimestamp)
	},
}

func readyOf(cl *clusterv1.Cluster) metav1.ConditionStatus {
	if c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady); c != nil {
		return c.Status
	}
	return ""
}

// exportsOfCluster wakes the exports propagated to a Cluster, and the
// collection of every MultiClusterService's Service (whose providers the
// Cluster may be).
func (r *reconciler) exportsOfCluster(ctx context.Context, obj client.Object) []reconcile.Request {
	var out []reconcile.Request
	var mcs networkingv1.MultiClusterServiceList
	if err := r.client.List(ctx, &mcs); err == nil {
		for i := range mcs.Items {
			out = append(out, reconcile.Request{NamespacedName: exportBinding(mcs.Items[i].Namespace, mcs.Items[i].Name)})
		}
	}
	var list workv1.ResourceBindingList
	if err := r.client.List(ctx, &list); err != nil {
		return out // the exports' resync collects them
	}
	for i := range list.Items {
		rb := &list.Items[i]
		if !mcsBinding(rb) || hoststore.GroupKindOf(rb.Spec.Resource) != multicluster.ServiceExportGK {
			continue
		}
		for _, tc := range rb.Spec.Clusters {
			if tc.Name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)})
				break
			}
		}
	}
	return out
}

// mcsBinding reports whether obj is the binding of a ServiceExport or a
// ServiceImport.
func mcsBinding(obj client.Object) bool {
	rb, ok := obj.(*workv1.ResourceBinding)
	return ok && rb.Namespace != "" && multicluster.IsMCSKind(hoststore.GroupKindOf(rb.Spec.Resource))
}

// collected reports whether obj is a slice collected onto the host.
func collected(obj client.Object) bool {
	_, ok := shared.ClusterOfNamespace(obj.GetNamespace())
	return ok && obj.GetLabels()[discoveryv1.LabelManagedBy] == multicluster.ManagedBy
}

// reported reports whether obj is a Pull agent's report, in a report
// space (shared.ReportNamespace).
func reported(obj client.Object) bool {
	_, ok := shared.ClusterOfReportNamespace(obj.GetNamespace())
	return ok && obj.GetLabels()[discoveryv1.LabelManagedBy] == multicluster.ReportedBy
}

// reportedCollection wakes the collection of a report's Service.
func reportedCollection(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	return []reconcile.Request{{NamespacedName: exportBinding(l[multicluster.LabelServiceNamespace], l[multicluster.LabelServiceName])}}
}

// collectedImport wakes the ServiceImport and the MultiClusterService of
// a collected slice's Service.
func collectedImport(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	ns, name := l[multicluster.LabelServiceNamespace], l[multicluster.LabelServiceName]
	return []reconcile.Request{{NamespacedName: shared.ImportBinding(ns, name)}, {NamespacedName: crossClusterKey(ns, name)}}
}

// workImport wakes the ServiceImport of an import Work, or the
// MultiClusterService of one of its Works.
func workImport(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if shared.CrossClusterWork(obj.(*workv1.Work)) {
		return []reconcile.Request{{NamespacedName: crossClusterKey(l[shared.LabelCrossClusterNamespace], l[shared.LabelCrossClusterName])}}
	}
	return []reconcile.Request{{NamespacedName: shared.ImportBinding(l[shared.LabelMCSImportNamespace], l[shared.LabelMCSImportName])}}
}

// crossClusterAndCollection wakes a MultiClusterService and its Service's
// collection.
func crossClusterAndCollection(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: crossClusterKey(obj.GetNamespace(), obj.GetName())}, {NamespacedName: exportBinding(obj.GetNamespace(), obj.GetName())}}
}

// serviceBinding reports whether obj is the binding of a core Service.
func serviceBinding(obj client.Object) bool {
	rb, ok := obj.(*workv1.ResourceBinding)
	return ok && hoststore.GroupKindOf(rb.Spec.Resource) == shared.ServiceGK
}

// crossClusterOfService wakes the MultiClusterService of a Service whose
// binding changed, and the Service's collection, when there is one.
func (r *reconciler) crossClusterOfService(ctx context.Context, obj client.Object) []reconcile.Request {
	rb := obj.(*workv1.ResourceBinding)
	var m networkingv1.MultiClusterService
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: rb.Namespace, Name: rb.Spec.Resource.Name}, &m); err != nil {
		return nil // none, or the resync finds it
	}
	return crossClusterAndCollection(ctx, &m)
}

// bindingSuffix ends the binding name of each MCS kind
// (hoststore.BindingName).
// A MultiClusterService has no binding (it is not propagated): its key
// takes the same form under its own group, the one this process serves
// (networkingv1.GroupVersion, read when called: apis.Use chooses it).
func bindingSuffix() map[string]string {
	return map[string]string{
		multicluster.KindServiceExport: "-" + strings.ToLower(multicluster.KindServiceExport) + "." + multicluster.Group,
		multicluster.KindServiceImport: "-" + strings.ToLower(multicluster.KindServiceImport) + "." + multicluster.Group,
		api.KindMultiClusterService:    "-" + strings.ToLower(api.KindMultiClusterService) + "." + networkingv1.GroupVersion.Group,
	}
}

// kindOfBinding returns the MCS kind and template name a binding name
// stands for, so that a binding already gone is still cleaned up after.
func kindOfBinding(name string) (kind, template string, ok bool) {
	for k, suffix := range bindingSuffix() {
		if t, found := strings.CutSuffix(name, suffix); found && t != "" {
			return k, t, true
		}
	}
	return "", "", false
}
