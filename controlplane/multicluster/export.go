package multicluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The conditions of a ServiceExport's status, the MCS API's (KEP-1645).
const (
	// ConditionValid is True while at least one cluster exports the
	// Service; its message names them, and says why each other cluster of
	// the export's placement does not.
	ConditionValid = "Valid"
	// ConditionConflict is True while the exporting clusters' Services
	// disagree on their ports or on being headless; its message names each
	// cluster with its definition.
	ConditionConflict = "Conflict"

	// ReasonExported (Valid=True): some cluster exports the Service.
	ReasonExported = "Exported"
	// ReasonNoExportingCluster (Valid=False): no cluster of the export's
	// placement exports it.
	ReasonNoExportingCluster = "NoExportingCluster"
	// ReasonNoConflict (Conflict=False): the exporting clusters agree.
	ReasonNoConflict = "NoConflict"
	// ReasonPortConflict (Conflict=True): their ports differ.
	ReasonPortConflict = "PortConflict"
	// ReasonTypeConflict (Conflict=True): some are headless, some not.
	ReasonTypeConflict = "TypeConflict"
)

// ExportedService is what a cluster's Service of an export is compared on
// between the exporting clusters.
type ExportedService struct {
	// Cluster is the member the Service runs in.
	Cluster string
	// Headless is a Service with clusterIP None.
	Headless bool
	// Ports are the Service's ports as name:port/protocol (and
	// appProtocol), sorted.
	Ports []string
}

// ServiceOf reads a member's Service svc of cluster for ExportConditions.
// why is not empty when the Service cannot be exported: an ExternalName
// Service has no endpoints (the MCS API's rule), and a Service that does
// not decode is refused rather than guessed at.
func ServiceOf(cluster string, svc *unstructured.Unstructured) (_ ExportedService, why string) {
	var s corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(svc.Object, &s); err != nil {
		return ExportedService{}, fmt.Sprintf("cluster %s: Service %s/%s does not decode: %v", cluster, svc.GetNamespace(), svc.GetName(), err)
	}
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return ExportedService{}, fmt.Sprintf("cluster %s: Service %s/%s is of type ExternalName, which has no endpoints to export", cluster, s.Namespace, s.Name)
	}
	out := ExportedService{Cluster: cluster, Headless: s.Spec.ClusterIP == corev1.ClusterIPNone}
	for _, p := range s.Spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		d := fmt.Sprintf("%s:%d/%s", p.Name, p.Port, proto)
		if p.AppProtocol != nil {
			d += " (" + *p.AppProtocol + ")"
		}
		out.Ports = append(out.Ports, d)
	}
	slices.Sort(out.Ports)
	return out, ""
}

// ExportConditions are the Valid and Conflict conditions of an export
// that exporting clusters export, whyNot saying why each other cluster of
// its placement does not (already naming the cluster). Times are left to
// the caller, which keeps a condition's lastTransitionTime while its
// status holds.
func ExportConditions(exporting []ExportedService, whyNot []string) []metav1.Condition {
	valid := metav1.Condition{Type: ConditionValid, Status: metav1.ConditionTrue, Reason: ReasonExported}
	names := make([]string, len(exporting))
	for i, e := range exporting {
		names[i] = e.Cluster
	}
	if len(exporting) > 0 {
		valid.Message = "exported from " + strings.Join(names, ", ")
	} else {
		valid.Status, valid.Reason, valid.Message = metav1.ConditionFalse, ReasonNoExportingCluster, "exported from no cluster"
		if len(whyNot) == 0 {
			valid.Message += ": the export is propagated to no cluster"
		}
	}
	if len(whyNot) > 0 {
		valid.Message += "; " + strings.Join(whyNot, "; ")
	}
	conflict := metav1.Condition{Type: ConditionConflict, Status: metav1.ConditionFalse, Reason: ReasonNoConflict,
		Message: "the exporting clusters' Services agree on their ports and type"}
	ports := groupBy(exporting, func(e ExportedService) string { return "[" + strings.Join(e.Ports, ", ") + "]" })
	types := groupBy(exporting, func(e ExportedService) string {
		if e.Headless {
			return "headless"
		}
		return "with a cluster IP"
	})
	var parts []string
	if len(ports) > 1 {
		conflict.Reason = ReasonPortConflict
		parts = append(parts, "ports differ: "+strings.Join(ports, "; "))
	}
	if len(types) > 1 {
		if conflict.Reason == ReasonNoConflict {
			conflict.Reason = ReasonTypeConflict
		}
		parts = append(parts, "type differs: "+strings.Join(types, "; "))
	}
	if len(parts) > 0 {
		conflict.Status = metav1.ConditionTrue
		conflict.Message = strings.Join(parts, "; ") + " (a consumer's derived Service takes its ports and type from its ServiceImport)"
	}
	return []metav1.Condition{valid, conflict}
}

// groupBy groups the exporting clusters by key, as "key in a, b", in the
// order of each key's first cluster.
func groupBy(exporting []ExportedService, key func(ExportedService) string) []string {
	var keys []string
	clusters := map[string][]string{}
	for _, e := range exporting {
		k := key(e)
		if _, ok := clusters[k]; !ok {
			keys = append(keys, k)
		}
		clusters[k] = append(clusters[k], e.Cluster)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + " in " + strings.Join(clusters[k], ", ")
	}
	return out
}
