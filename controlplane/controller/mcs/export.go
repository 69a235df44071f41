package mcs

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// Member resources the collection reads.
var (
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	serviceExportsGVR = schema.GroupVersionResource{Group: multicluster.Group, Version: multicluster.Version, Resource: "serviceexports"}
)

// collect brings the host's collected slices of the Service
// namespace/name to what its sources contribute now: the clusters that
// export it (its ServiceExport's binding, trusted: shared.Trust) and the
// providers of its MultiClusterService (shared.CrossClusterSets). One
// collection serves both, over the same member informers, so a Service
// both exported and served by a MultiClusterService is read and written
// once. A cluster contributes only while it is not NotReady and runs the
// Service, and, as an exporter, its ServiceExport; a cluster that cannot
// be read keeps what was last collected from it until the cluster status
// controller marks it NotReady, which withdraws it. The ServiceExport, if
// any, gets its Valid and Conflict conditions. With neither source,
// nothing is collected and active is false.
func (r *reconciler) collect(ctx context.Context, namespace, name string) (active bool, err error) {
	rb, tmpl, exportTo, err := r.exportSource(ctx, namespace, name)
	if err != nil {
		return true, err
	}
	provideFrom, err := r.crossClusterProviders(ctx, namespace, name)
	if err != nil {
		return true, err
	}
	if tmpl == nil && provideFrom == nil {
		return false, r.cleanup(ctx, multicluster.KindServiceExport, namespace, name)
	}
	return true, r.collectFrom(ctx, namespace, name, rb, tmpl, exportTo, provideFrom)
}

// collectFrom is collect once the sources are known.
func (r *reconciler) collectFrom(ctx context.Context, namespace, name string, rb *workv1.ResourceBinding, tmpl *unstructured.Unstructured, exportTo, provideFrom []string) error {
	svc := types.NamespacedName{Namespace: namespace, Name: name}
	exporters, providersSet := sets.New(exportTo...), sets.New(provideFrom...)
	desired := map[client.ObjectKey]*discoveryv1.EndpointSlice{}
	kept := map[string]bool{}
	var sources []api.TargetCluster
	var exported []api.TargetCluster
	var exporting []multicluster.ExportedService
	var whyNot []string
	for _, cluster := range sets.List(exporters.Union(providersSet)) {
		c, err := r.contribution(ctx, cluster, svc, exporters.Has(cluster))
		if err != nil {
			return err
		}
		if exporters.Has(cluster) && c.why != "" {
			whyNot = append(whyNot, c.why)
		}
		if !c.reachable {
			kept[cluster] = true
			metrics.MCSSyncErrors.WithLabelValues(cluster).Inc()
			continue
		}
		exports := exporters.Has(cluster) && c.why == ""
		provides := providersSet.Has(cluster) && c.serviceWhy == ""
		if exports {
			exported = append(exported, api.TargetCluster{Name: cluster})
			exporting = append(exporting, c.service)
		}
		if !exports && !provides {
			continue
		}
		sources = append(sources, api.TargetCluster{Name: cluster})
		for _, s := range c.slices {
			c := multicluster.Collect(cluster, shared.ExecutionNamespace(cluster), s)
			desired[client.ObjectKeyFromObject(c)] = c
		}
	}
	if err := shared.EnsureExecutionSpaces(ctx, r.client, sources); err != nil {
		return err
	}
	endpoints, err := r.writeCollected(ctx, svc, desired, kept)
	if err != nil {
		return err
	}
	metrics.MCSExportedEndpoints.WithLabelValues(svc.Namespace, svc.Name).Set(float64(endpoints))
	if tmpl == nil {
		return nil
	}
	r.exported(rb, exported, whyNot)
	return r.writeConditions(ctx, tmpl, multicluster.ExportConditions(exporting, whyNot))
}

// exportSource is the ServiceExport namespace/name's binding, template and
// trusted clusters; nil for an export that is gone, being deleted or
// refused (which exports nothing). A binding waiting for the scheduler
// returns shared.ErrPending: what was collected stays until it is
// scheduled.
func (r *reconciler) exportSource(ctx context.Context, namespace, name string) (*workv1.ResourceBinding, *unstructured.Unstructured, []string, error) {
	var rb workv1.ResourceBinding
	err := r.client.Get(ctx, exportBinding(namespace, name), &rb)
	switch {
	case shared.IsNotFound(err):
		return nil, nil, nil, nil
	case err != nil:
		return nil, nil, nil, fmt.Errorf("read binding %s: %w", exportBinding(namespace, name), err)
	case !rb.DeletionTimestamp.IsZero() || rb.Spec.Resource.Name != name:
		return nil, nil, nil, nil
	}
	tmpl, err := shared.ReadTemplate(ctx, r.client, &rb)
	if err != nil || tmpl == nil {
		return nil, nil, nil, refusedIsNothing(err)
	}
	t, err := shared.Trust(ctx, r.client, &rb, tmpl, r.opts)
	if err != nil {
		return nil, nil, nil, refusedIsNothing(err)
	}
	clusters := make([]string, 0, len(t.Clusters))
	for _, tc := range t.Clusters {
		clusters = append(clusters, tc.Name)
	}
	return &rb, tmpl, clusters, nil
}

// refusedIsNothing drops a refusal: a refused source contributes nothing.
func refusedIsNothing(err error) error {
	if shared.IsRefused(err) {
		return nil
	}
	return err
}

// contribution is what one cluster of an export contributes.
type contribution struct {
	// slices are the member's slices of the Service.
	slices []*discoveryv1.EndpointSlice
	// service is the member's Service, for the conflict rules.
	service multicluster.ExportedService
	// reachable is false when the member could not be read (its last
	// collection is kept).
	reachable bool
	// why says why the cluster does not export, "" when it does;
	// serviceWhy why it does not provide the Service at all (why without
	// a missing ServiceExport, which a MultiClusterService's provider
	// does not need).
	why, serviceWhy string
}

// contribution reads what cluster contributes to svc. A NotReady or
// unknown cluster, or one that does not run the Service (or runs it as
// ExternalName), contributes nothing; as an exporter (asExporter) it must
// also run the ServiceExport. A Pull cluster's contribution is what its
// agent reported (reported).
func (r *reconciler) contribution(ctx context.Context, cluster string, svc types.NamespacedName, asExporter bool) (contribution, error) {
	none := func(why string) contribution { return contribution{reachable: true, why: why, serviceWhy: why} }
	var cl clusterv1.Cluster
	err := r.client.Get(ctx, client.ObjectKey{Name: cluster}, &cl)
	switch {
	case shared.IsNotFound(err):
		return none(fmt.Sprintf("cluster %s is not registered", cluster)), nil
	case err != nil:
		return contribution{}, fmt.Errorf("read cluster %s: %w", cluster, err)
	}
	if c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady); c != nil && c.Status == metav1.ConditionFalse {
		return none(fmt.Sprintf("cluster %s is not ready, its endpoints are withdrawn", cluster)), nil
	}
	if shared.IsPull(&cl) {
		// The control plane cannot read the member: its agent reports.
		return r.reported(ctx, cluster, svc, asExporter)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.WithDefaults().MemberRequestTimeout)
	defer cancel()
	why := fmt.Sprintf("cluster %s cannot be read, its last endpoints are kept until it is found not ready", cluster)
	unreadable := contribution{why: why, serviceWhy: why}
	target, err := r.members.Member(ctx, cluster)
	if err != nil {
		return unreadable, nil
	}
	var out contribution
	gvrs := []schema.GroupVersionResource{servicesGVR}
	if asExporter {
		gvrs = append(gvrs, serviceExportsGVR)
	}
	for _, gvr := range gvrs {
		obj, err := target.Dynamic.Resource(gvr).Namespace(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		switch {
		case (apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err)) && gvr == servicesGVR:
			return none(fmt.Sprintf("cluster %s runs no Service %s", cluster, svc)), nil
		case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
			// The Service still serves a MultiClusterService.
			out.why = fmt.Sprintf("cluster %s runs no %s %s", cluster, multicluster.KindServiceExport, svc)
		case err != nil:
			return unreadable, nil
		case gvr == servicesGVR:
			if out.service, out.serviceWhy = multicluster.ServiceOf(cluster, obj); out.serviceWhy != "" {
				return none(out.serviceWhy), nil
			}
		}
	}
	// Watched (the member cache keeps the namespace's slices, and their
	// changes wake the collection), so a reconcile costs the member
	// nothing more than the reads above.
	got, err := target.EndpointSlices(ctx, svc.Namespace, svc.Name)
	if err != nil {
		return unreadable, nil
	}
	for _, s := range got {
		// The index is by the member's label; the slice is checked again
		// here, so a member that answers with other slices contributes
		// nothing of them.
		if multicluster.ExportedSlice(svc, s) != "" {
			continue
		}
		out.slices = append(out.slices, s)
	}
	out.reachable = true
	return out, nil
}

// writeCollected makes the host's collected slices of svc the desired
// ones: created, updated only when they differ, and deleted when no
// cluster contributes them, except those of the kept clusters. It returns
// the number of endpoint addresses the host holds for svc then.
func (r *reconciler) writeCollected(ctx context.Context, svc types.NamespacedName, desired map[client.ObjectKey]*discoveryv1.EndpointSlice, kept map[string]bool) (int, error) {
	have, err := shared.CollectedSlices(ctx, r.client, svc.Namespace, svc.Name)
	if err != nil {
		return 0, err
	}
	endpoints := 0
	for _, want := range desired {
		endpoints += addressCount(want)
	}
	for i := range have {
		cur := &have[i]
		key := client.ObjectKeyFromObject(cur)
		want, ok := desired[key]
		switch {
		case !ok && kept[cur.Labels[multicluster.LabelSourceCluster]]:
			endpoints += addressCount(cur)
		case !ok:
			if err := r.client.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
				return 0, fmt.Errorf("delete collected endpoint slice %s: %w", key, err)
			}
		case cur.AddressType != want.AddressType:
			// Immutable: the copy is made again. (Its name comes from the
			// address type, so only a copy written otherwise gets here.)
			if err := r.client.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
				return 0, fmt.Errorf("delete collected endpoint slice %s of address type %s: %w", key, cur.AddressType, err)
			}
			continue // created below
		case !multicluster.SameCollected(cur, want):
			upd := cur.DeepCopy()
			for k, v := range want.Labels {
				upd.Labels[k] = v
			}
			upd.AddressType, upd.Endpoints, upd.Ports = want.AddressType, want.Endpoints, want.Ports
			if err := r.client.Update(ctx, upd); err != nil {
				return 0, fmt.Errorf("update collected endpoint slice %s: %w", key, err)
			}
		}
		delete(desired, key)
	}
	for key, want := range desired {
		if err := r.client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("create collected endpoint slice %s: %w", key, err)
		}
	}
	return endpoints, nil
}

// addressCount is the number of endpoint addresses of a slice.
func addressCount(s *discoveryv1.EndpointSlice) int {
	n := 0
	for _, e := range s.Endpoints {
		n += len(e.Addresses)
	}
	return n
}

// reported is the contribution of the Pull cluster cluster to svc: the
// reports its agent wrote into the cluster's report space
// (shared.ReportedSlices), read as the slices of a Push member are, under
// the same rules (ExportedSlice). Only the space says which cluster a
// report is from, and only the clusters the Service's sources name are
// ever read, so an agent's report of a Service its cluster does not
// export or provide, or in another cluster's space, is never collected.
// No report is a Service the agent does not report as running; a report
// that does not decode contributes nothing and is named.
func (r *reconciler) reported(ctx context.Context, cluster string, svc types.NamespacedName, asExporter bool) (contribution, error) {
	reports, err := shared.ReportedSlices(ctx, r.client, cluster, svc.Namespace, svc.Name)
	switch {
	case shared.IsRefused(err):
		why := err.Error()
		return contribution{reachable: true, why: why, serviceWhy: why}, nil
	case err != nil:
		return contribution{}, err
	case len(reports) == 0:
		why := fmt.Sprintf("the agent of cluster %s reports no endpoints of Service %s", cluster, svc)
		return contribution{reachable: true, why: why, serviceWhy: why}, nil
	}
	out := contribution{reachable: true}
	exported := true
	for i := range reports {
		s, service, exp, why := multicluster.FromReport(cluster, svc, &reports[i])
		if why != "" {
			return contribution{reachable: true, why: why, serviceWhy: why}, nil
		}
		out.service, exported = service, exported && exp
		if multicluster.ExportedSlice(svc, s) == "" {
			out.slices = append(out.slices, s)
		}
	}
	if asExporter && !exported {
		out.why = fmt.Sprintf("cluster %s runs no %s %s, its agent reports", cluster, multicluster.KindServiceExport, svc)
	}
	return out, nil
}
