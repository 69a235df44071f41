package mcs

import (
	"context"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// export collects the slices of a ServiceExport's Service from the
// clusters its binding is trusted to propagate it to (shared.Trust), onto
// the host, and writes the export's Valid and Conflict conditions. A
// cluster contributes only while it is not NotReady and runs both the
// Service and the ServiceExport; a cluster that cannot be reached keeps
// what was last collected from it until the cluster status controller
// marks it NotReady, which withdraws it.
func (r *reconciler) export(ctx context.Context, rb *workv1.ResourceBinding) error {
	tmpl, err := shared.ReadTemplate(ctx, r.client, rb)
	if err != nil {
		return err
	}
	if tmpl == nil {
		return r.cleanup(ctx, multicluster.KindServiceExport, rb.Namespace, rb.Spec.Resource.Name)
	}
	t, err := shared.Trust(ctx, r.client, rb, tmpl, r.opts)
	if err != nil {
		return err
	}
	svc := types.NamespacedName{Namespace: tmpl.GetNamespace(), Name: tmpl.GetName()}
	desired := map[client.ObjectKey]*discoveryv1.EndpointSlice{}
	kept := map[string]bool{}
	var providers []api.TargetCluster
	var exporting []multicluster.ExportedService
	var whyNot []string
	for _, tc := range t.Clusters {
		c, err := r.contribution(ctx, tc.Name, svc)
		if err != nil {
			return err
		}
		if c.why != "" {
			whyNot = append(whyNot, c.why)
		}
		if !c.reachable {
			kept[tc.Name] = true
			metrics.MCSSyncErrors.WithLabelValues(tc.Name).Inc()
			continue
		}
		if c.why == "" {
			providers = append(providers, tc)
			exporting = append(exporting, c.service)
		}
		for _, s := range c.slices {
			c := multicluster.Collect(tc.Name, shared.ExecutionNamespace(tc.Name), s)
			desired[client.ObjectKeyFromObject(c)] = c
		}
	}
	if err := shared.EnsureExecutionSpaces(ctx, r.client, providers); err != nil {
		return err
	}
	endpoints, err := r.writeCollected(ctx, svc, desired, kept)
	if err != nil {
		return err
	}
	metrics.MCSExportedEndpoints.WithLabelValues(svc.Namespace, svc.Name).Set(float64(endpoints))
	r.exported(rb, providers, whyNot)
	return r.writeConditions(ctx, tmpl, multicluster.ExportConditions(exporting, whyNot))
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
	// why says why the cluster does not export, "" when it does.
	why string
}

// contribution reads what cluster contributes to svc. A NotReady,
// unknown or pull-mode cluster, or one that does not run the Service
// (or runs it as ExternalName) and its ServiceExport, contributes nothing.
func (r *reconciler) contribution(ctx context.Context, cluster string, svc types.NamespacedName) (contribution, error) {
	var cl clusterv1.Cluster
	err := r.client.Get(ctx, client.ObjectKey{Name: cluster}, &cl)
	switch {
	case shared.IsNotFound(err):
		return contribution{reachable: true, why: fmt.Sprintf("cluster %s is not registered", cluster)}, nil
	case err != nil:
		return contribution{}, fmt.Errorf("read cluster %s: %w", cluster, err)
	}
	if c := apimeta.FindStatusCondition(cl.Status.Conditions, api.ClusterConditionReady); c != nil && c.Status == metav1.ConditionFalse {
		return contribution{reachable: true, why: fmt.Sprintf("cluster %s is not ready, its endpoints are withdrawn", cluster)}, nil
	}
	if shared.IsPull(&cl) {
		// A pull-mode member's slices would come from its agent, which
		// does not report them yet.
		return contribution{reachable: true, why: fmt.Sprintf("cluster %s is a pull-mode member, which does not export yet", cluster)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.WithDefaults().MemberRequestTimeout)
	defer cancel()
	unreadable := contribution{why: fmt.Sprintf("cluster %s cannot be read, its last endpoints are kept until it is found not ready", cluster)}
	target, err := r.members.Member(ctx, cluster)
	if err != nil {
		return unreadable, nil
	}
	var out contribution
	for _, gvr := range []schema.GroupVersionResource{servicesGVR, serviceExportsGVR} {
		obj, err := target.Dynamic.Resource(gvr).Namespace(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
			return contribution{reachable: true, why: fmt.Sprintf("cluster %s runs no %s %s", cluster, kindOf(gvr), svc)}, nil
		case err != nil:
			return unreadable, nil
		case gvr == servicesGVR:
			if out.service, out.why = multicluster.ServiceOf(cluster, obj); out.why != "" {
				return contribution{reachable: true, why: out.why}, nil
			}
		}
	}
	// Watched (the member cache keeps the namespace's slices, and their
	// changes wake this export), so a reconcile costs the member nothing
	// more than the two reads above.
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

// kindOf names the kind of a member resource the collection reads.
func kindOf(gvr schema.GroupVersionResource) string {
	if gvr == servicesGVR {
		return "Service"
	}
	return multicluster.KindServiceExport
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
