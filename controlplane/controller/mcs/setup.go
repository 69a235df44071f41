package mcs

import (
	"context"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// maxCollectInterval bounds how long a member's endpoint change waits
// before it is collected, whatever the resync.
const maxCollectInterval = 5 * time.Second

// Setup registers the multi-cluster services controller with mgr. It reads
// members through ms, the connections every reconciler shares, and records
// its events with events.
func Setup(mgr ctrl.Manager, ms *shared.Members, opts shared.Options, events shared.Recorder) error {
	interval := min(opts.WithDefaults().Resync, maxCollectInterval)
	r := &reconciler{client: mgr.GetClient(), members: ms, opts: opts, interval: interval, events: events}
	return ctrl.NewControllerManagedBy(mgr).Named("mcs").
		For(&workv1.ResourceBinding{}, builder.WithPredicates(predicate.NewPredicateFuncs(mcsBinding))).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(collectedImport),
			builder.WithPredicates(predicate.NewPredicateFuncs(collected))).
		Watches(&workv1.Work{}, handler.EnqueueRequestsFromMapFunc(workImport),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return shared.MCSWork(o.(*workv1.Work)) }))).
		Complete(r)
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

// collectedImport wakes the ServiceImport of a collected slice's Service.
func collectedImport(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	return []reconcile.Request{{NamespacedName: shared.ImportBinding(l[multicluster.LabelServiceNamespace], l[multicluster.LabelServiceName])}}
}

// workImport wakes the ServiceImport of an import Work.
func workImport(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	return []reconcile.Request{{NamespacedName: shared.ImportBinding(l[shared.LabelMCSImportNamespace], l[shared.LabelMCSImportName])}}
}

// bindingSuffix ends the binding name of each MCS kind
// (hoststore.BindingName).
var bindingSuffix = map[string]string{
	multicluster.KindServiceExport: "-" + strings.ToLower(multicluster.KindServiceExport) + "." + multicluster.Group,
	multicluster.KindServiceImport: "-" + strings.ToLower(multicluster.KindServiceImport) + "." + multicluster.Group,
}

// kindOfBinding returns the MCS kind and template name a binding name
// stands for, so that a binding already gone is still cleaned up after.
func kindOfBinding(name string) (kind, template string, ok bool) {
	for k, suffix := range bindingSuffix {
		if t, found := strings.CutSuffix(name, suffix); found && t != "" {
			return k, t, true
		}
	}
	return "", "", false
}
