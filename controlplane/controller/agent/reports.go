package agent

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// Member resources the reporter reads.
var (
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	serviceExportsGVR = schema.GroupVersionResource{Group: multicluster.Group, Version: multicluster.Version, Resource: "serviceexports"}
)

// reporter is the multi-cluster services part of a Pull agent: the host
// cannot read its member, so the agent reports the EndpointSlices of the
// Services the hub propagated to it (a Service or a ServiceExport in one
// of its Works) into its cluster's report space (shared.ReportNamespace),
// the only place its identity may write them. The control plane collects
// a report only for a Service the cluster exports or provides, as it
// reads a Push member's slices. Imported Services and slices (a Work of a
// ServiceImport or a MultiClusterService consumer) are never reported.
type reporter struct {
	hub     client.Client
	reader  client.Reader
	member  *member.Client
	cluster string
	log     logr.Logger
	// kick asks for a pass at once (a member slice changed).
	kick chan struct{}
	// empty is set once a pass found no Service to report and left no
	// report: the next such pass asks the hub nothing (a member that
	// exports nothing costs the hub no request per interval).
	empty bool
}

// notify asks for a pass; a pass already asked for covers this one.
func (r *reporter) notify() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run reports now, on every kick and every interval until ctx ends; a
// failing pass is tried again, and logged when its reason is not the one
// the last pass logged (an agent registered before report spaces existed
// says what to run once, not every interval).
func (r *reporter) run(ctx context.Context, interval, timeout time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	logged := ""
	for {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := r.report(pctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && err.Error() != logged:
			logged = err.Error()
			r.log.Info("report endpoint slices failed; retrying", "reason", logged)
		case err == nil:
			logged = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
	}
}

// report makes the report space hold exactly the reports of the member's
// slices of the reported Services: created, updated only when they
// differ, deleted when nothing reports them any more. A Service whose
// member objects could not be read keeps its last reports.
func (r *reporter) report(ctx context.Context) error {
	services, err := r.services(ctx)
	if err != nil {
		return err
	}
	if len(services) == 0 && r.empty {
		return nil
	}
	space := shared.ReportNamespace(r.cluster)
	desired := map[string]*discoveryv1.EndpointSlice{}
	unread := map[types.NamespacedName]bool{}
	for _, svc := range services {
		reports, err := r.reportsOf(ctx, space, svc)
		if err != nil {
			r.log.V(1).Info("member service not read; its last reports are kept", "service", svc.String(), "reason", err.Error())
			unread[svc] = true
			continue
		}
		for _, s := range reports {
			desired[s.Name] = s
		}
	}
	var have discoveryv1.EndpointSliceList
	if err := r.reader.List(ctx, &have, client.InNamespace(space), client.MatchingLabels{discoveryv1.LabelManagedBy: multicluster.ReportedBy}); err != nil {
		if apierrors.IsForbidden(err) {
			return r.noReportSpace(err)
		}
		return fmt.Errorf("list the reports of cluster %s in %s: %w", r.cluster, space, err)
	}
	for i := range have.Items {
		cur := &have.Items[i]
		want, ok := desired[cur.Name]
		switch {
		case !ok && unread[types.NamespacedName{Namespace: cur.Labels[multicluster.LabelServiceNamespace], Name: cur.Labels[multicluster.LabelServiceName]}]:
		case !ok || cur.AddressType != want.AddressType:
			if err := r.hub.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete report %s/%s: %w", space, cur.Name, err)
			}
			continue // a changed address type is created again below
		case !multicluster.SameReport(cur, want):
			upd := cur.DeepCopy()
			upd.Labels, upd.Annotations = want.Labels, want.Annotations
			upd.Endpoints, upd.Ports = want.Endpoints, want.Ports
			if err := r.hub.Update(ctx, upd); err != nil {
				return fmt.Errorf("update report %s/%s: %w", space, cur.Name, err)
			}
		}
		delete(desired, cur.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(desired)) {
		if err := r.hub.Create(ctx, desired[name]); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create report %s/%s: %w", space, name, err)
		}
	}
	// Every report left was deleted above, none created.
	r.empty = len(services) == 0
	return nil
}

// noReportSpace is the error of an agent whose identity may not use its
// report space: it was registered before `register` made report spaces (an
// upgrade), so the space or its RoleBinding is missing. Only an
// administrator may grant it, so the agent says exactly what to run; the
// rest of the agent (Lease, status, Works) is unaffected.
func (r *reporter) noReportSpace(err error) error {
	groups := ""
	if apis.Current() == apis.KarmadaGroups {
		groups = " --api-groups=karmada"
	}
	return fmt.Errorf("the agent of cluster %s may not report its exported Services' endpoints into %s, its report space (registered before report spaces existed?): run `terraform-provider-flotilla register --cluster-name %s%s` once with the hub administrator's kubeconfig, which adds the space and its rights and keeps the agent's identity; until then no endpoint of this cluster reaches other clusters: %w",
		r.cluster, shared.ReportNamespace(r.cluster), r.cluster, groups, err)
}

// services are the Services the hub propagated to the member, by a Work
// of a binding carrying the Service itself or its ServiceExport.
func (r *reporter) services(ctx context.Context) ([]types.NamespacedName, error) {
	var works workv1.WorkList
	if err := r.hub.List(ctx, &works, client.InNamespace(shared.ExecutionNamespace(r.cluster))); err != nil {
		return nil, fmt.Errorf("list the works of cluster %s: %w", r.cluster, err)
	}
	seen := map[types.NamespacedName]bool{}
	for i := range works.Items {
		w := &works.Items[i]
		if shared.MCSWork(w) || shared.CrossClusterWork(w) || !w.DeletionTimestamp.IsZero() {
			continue // imported, never reported
		}
		objs, err := shared.Manifests(w)
		if err != nil {
			continue // execution reports the Work's error
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			if (gvk.Group == "" && gvk.Kind == "Service") || gvk.GroupKind() == multicluster.ServiceExportGK {
				seen[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b types.NamespacedName) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}), nil
}

// reportsOf are the reports of the member Service svc: none when the
// member does not run it (or runs it as ExternalName), else one per slice
// ExportedSlice admits, each saying how the Service is defined and
// whether the member exports it. An error is a member that did not
// answer.
func (r *reporter) reportsOf(ctx context.Context, space string, svc types.NamespacedName) ([]*discoveryv1.EndpointSlice, error) {
	obj, err := r.member.Dynamic.Resource(servicesGVR).Namespace(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read service %s: %w", svc, err)
	}
	service, why := multicluster.ServiceOf(r.cluster, obj)
	if why != "" {
		return nil, nil
	}
	rs := multicluster.ReportedService{Exported: true, Headless: service.Headless, Ports: service.Ports}
	_, err = r.member.Dynamic.Resource(serviceExportsGVR).Namespace(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
		rs.Exported = false
	case err != nil:
		return nil, fmt.Errorf("read %s %s: %w", multicluster.KindServiceExport, svc, err)
	}
	got, err := r.member.EndpointSlices(ctx, svc.Namespace, svc.Name)
	if err != nil {
		return nil, err
	}
	var out []*discoveryv1.EndpointSlice
	for _, s := range got {
		if multicluster.ExportedSlice(svc, s) == "" {
			out = append(out, multicluster.Report(space, s, rs))
		}
	}
	return out, nil
}
