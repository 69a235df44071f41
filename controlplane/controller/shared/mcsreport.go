package shared

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/multicluster"
)

// The report space of a Pull cluster: the host namespace where its agent,
// and nobody else but the hub's administrators, writes the EndpointSlices
// of the Services its member runs (multicluster.Report). It is not the
// execution namespace on purpose: there the collected slices, which every
// consumer trusts, live, and RBAC cannot let an agent write some
// EndpointSlices of a namespace and not others. An agent that may write
// only its report space can say what its own member runs, never what the
// host collected, nor what another cluster runs.
const (
	// reportSpacePrefix starts a report space's name; with a cluster name
	// of at most 48 characters it fits a DNS label, in either family of
	// API groups (the space is flotilla's own, Karmada has none).
	reportSpacePrefix = "flotilla-mcs-"
	// LabelReportSpace marks a namespace created to hold the reports of
	// the Pull cluster it names.
	LabelReportSpace = "mcs.flotilla.io/report-space"
)

// ReportNamespace is the report space of the Pull cluster cluster.
func ReportNamespace(cluster string) string { return reportSpacePrefix + cluster }

// ClusterOfReportNamespace returns the cluster of a report space, or false
// when namespace is not one.
func ClusterOfReportNamespace(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, reportSpacePrefix)
	return cluster, ok && cluster != ""
}

// CheckReportSpace refuses a report space flotilla did not create for
// cluster (its label, set by the registration): reports in a namespace
// somebody else made could be anyone's.
func CheckReportSpace(ns *corev1.Namespace, cluster string) error {
	if ns.Labels[LabelReportSpace] != cluster {
		return &RefusedError{Object: "Namespace " + ns.Name, Reasons: field.ErrorList{field.Invalid(field.NewPath("metadata", "labels").Key(LabelReportSpace), ns.Labels[LabelReportSpace],
			fmt.Sprintf("report namespace of cluster %s exists and was not created by flotilla's registration; delete it and register the agent again, or label it %s=%s if flotilla's it is", cluster, LabelReportSpace, cluster))}}
	}
	return nil
}

// ReportedSlices are the reports the agent of the Pull cluster cluster
// wrote of the member Service namespace/name: the EndpointSlices of its
// report space, once that space is flotilla's (CheckReportSpace), that
// name the Service by their labels. Nothing in a report is believed about
// which cluster it is from: the namespace says so, and only that cluster's
// agent may write it. Whether cluster may contribute to the Service at
// all, the caller decides (it exports the Service, or provides it).
func ReportedSlices(ctx context.Context, c client.Reader, cluster, namespace, name string) ([]discoveryv1.EndpointSlice, error) {
	space := ReportNamespace(cluster)
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: space}, &ns); err != nil {
		if IsNotFound(err) {
			return nil, nil // never registered for reports: nothing reported
		}
		return nil, fmt.Errorf("read report namespace %s of cluster %s: %w", space, cluster, err)
	}
	if err := CheckReportSpace(&ns, cluster); err != nil {
		return nil, err
	}
	var list discoveryv1.EndpointSliceList
	if err := c.List(ctx, &list, client.InNamespace(space), client.MatchingLabels{
		discoveryv1.LabelManagedBy:         multicluster.ReportedBy,
		multicluster.LabelServiceNamespace: namespace,
		multicluster.LabelServiceName:      name,
	}); err != nil {
		return nil, fmt.Errorf("list endpoint slices cluster %s reported of service %s/%s: %w", cluster, namespace, name, err)
	}
	return list.Items, nil
}
