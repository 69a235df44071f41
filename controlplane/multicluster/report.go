package multicluster

import (
	"encoding/json"
	"fmt"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What a Pull cluster's agent reports (Report) and how the host reads it
// (FromReport).
const (
	// ReportedBy is the endpointslice.kubernetes.io/managed-by value of a
	// report: never ManagedBy, so a report is never taken for a slice the
	// host collected, nor collected from a member again.
	ReportedBy = "agent.mcs.flotilla.io"
	// AnnotationReportedService holds, on each report, what the member's
	// Service is compared on between exporting clusters and whether the
	// member runs the Service's ServiceExport (ReportedService, as JSON).
	AnnotationReportedService = "mcs.flotilla.io/reported-service"
)

// ReportedService is what an agent says of its member's Service beside
// its slices.
type ReportedService struct {
	// Exported is whether the member runs the Service's ServiceExport.
	Exported bool `json:"exported"`
	// Headless and Ports are ExportedService's.
	Headless bool     `json:"headless"`
	Ports    []string `json:"ports"`
}

// Report is the host object by which a Pull cluster's agent reports the
// member slice s of the Service it runs, svc describing that Service
// (ServiceOf, and whether it is exported), into its report space
// reportNamespace. It holds what Collect keeps, under the name Collect
// gives, with the Service's namespace and name as labels.
func Report(reportNamespace string, s *discoveryv1.EndpointSlice, svc ReportedService) *discoveryv1.EndpointSlice {
	raw, _ := json.Marshal(svc) // strings and booleans: never fails
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: reportNamespace,
			Name:      CollectedSliceName(s.Namespace, s.Name, s.AddressType),
			Labels: map[string]string{
				discoveryv1.LabelManagedBy: ReportedBy,
				LabelServiceNamespace:      s.Namespace,
				LabelServiceName:           s.Labels[discoveryv1.LabelServiceName],
			},
			Annotations: map[string]string{AnnotationReportedService: string(raw)},
		},
		AddressType: s.AddressType,
		Endpoints:   endpoints(s.Endpoints),
		Ports:       slices.Clone(s.Ports),
	}
}

// SameReport reports whether the report have already says what want does.
func SameReport(have, want *discoveryv1.EndpointSlice) bool {
	return SameCollected(have, want) && have.Annotations[AnnotationReportedService] == want.Annotations[AnnotationReportedService]
}

// FromReport reads a report of cluster's agent for the Service svc as the
// member slice it stands for (to be checked by ExportedSlice and copied by
// Collect, as a slice read from a Push member is) and what it says of the
// member's Service. why is not empty for a report of another Service, or
// one that does not decode, naming the cluster and the report: it
// contributes nothing.
func FromReport(cluster string, svc types.NamespacedName, r *discoveryv1.EndpointSlice) (_ *discoveryv1.EndpointSlice, _ ExportedService, exported bool, why string) {
	if r.Labels[LabelServiceNamespace] != svc.Namespace || r.Labels[LabelServiceName] != svc.Name || r.Labels[discoveryv1.LabelManagedBy] != ReportedBy {
		return nil, ExportedService{}, false, fmt.Sprintf("cluster %s: report %s/%s is not a report of Service %s", cluster, r.Namespace, r.Name, svc)
	}
	var rs ReportedService
	if err := json.Unmarshal([]byte(r.Annotations[AnnotationReportedService]), &rs); err != nil {
		return nil, ExportedService{}, false, fmt.Sprintf("cluster %s: report %s/%s: annotation %s: %v", cluster, r.Namespace, r.Name, AnnotationReportedService, err)
	}
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: svc.Namespace, Name: r.Name, Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: r.AddressType,
		Endpoints:   endpoints(r.Endpoints),
		Ports:       slices.Clone(r.Ports),
	}
	ports := slices.Clone(rs.Ports)
	slices.Sort(ports)
	return s, ExportedService{Cluster: cluster, Headless: rs.Headless, Ports: ports}, rs.Exported, ""
}
