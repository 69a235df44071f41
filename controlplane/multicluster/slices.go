package multicluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ExportedSlice says why a member's slice may not be contributed to the
// exported Service svc, or "" when it may. Only a slice of svc's namespace
// that names svc by the kubernetes.io/service-name label counts, of an IP
// address type, and never one flotilla wrote itself. Which member it came
// from, and whether that member runs and exports svc, the caller knows:
// nothing in the slice says so.
func ExportedSlice(svc types.NamespacedName, s *discoveryv1.EndpointSlice) string {
	switch {
	case s.Namespace != svc.Namespace:
		return fmt.Sprintf("EndpointSlice %s/%s is not of the exported Service's namespace %s", s.Namespace, s.Name, svc.Namespace)
	case s.Labels[discoveryv1.LabelServiceName] != svc.Name:
		return fmt.Sprintf("EndpointSlice %s/%s belongs to Service %q, not to the exported %q", s.Namespace, s.Name, s.Labels[discoveryv1.LabelServiceName], svc.Name)
	case Ours(s):
		return fmt.Sprintf("EndpointSlice %s/%s was imported by flotilla and is never exported again", s.Namespace, s.Name)
	case s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6:
		return fmt.Sprintf("EndpointSlice %s/%s has address type %s; only IPv4 and IPv6 endpoints are exported", s.Namespace, s.Name, s.AddressType)
	}
	return ""
}

// Collect is the host's copy of a member slice that ExportedSlice admitted:
// in hostNamespace (the cluster's execution namespace), labelled with the
// cluster it was read from and the exported Service. Only what a consumer
// can use is kept: addresses, conditions, hostname and zone of each
// endpoint, and the ports. Pod references and node names name objects of
// the source cluster and are dropped.
func Collect(cluster, hostNamespace string, s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: hostNamespace,
			Name:      CollectedSliceName(s.Namespace, s.Name, s.AddressType),
			Labels: map[string]string{
				discoveryv1.LabelManagedBy: ManagedBy,
				LabelSourceCluster:         cluster,
				LabelServiceName:           s.Labels[discoveryv1.LabelServiceName],
				LabelServiceNamespace:      s.Namespace,
			},
		},
		AddressType: s.AddressType,
		Endpoints:   endpoints(s.Endpoints),
		Ports:       slices.Clone(s.Ports),
	}
	return out
}

// endpoints copies what a consumer can use of each endpoint.
func endpoints(in []discoveryv1.Endpoint) []discoveryv1.Endpoint {
	if len(in) == 0 {
		return nil
	}
	out := make([]discoveryv1.Endpoint, len(in))
	for i, e := range in {
		c := e.DeepCopy()
		out[i] = discoveryv1.Endpoint{Addresses: c.Addresses, Conditions: c.Conditions, Hostname: c.Hostname, Zone: c.Zone}
	}
	return out
}

// SameCollected reports whether the collected slice have carries want's
// labels and the same address type, endpoints and ports: an unchanged member slice
// writes nothing on the host.
func SameCollected(a, b *discoveryv1.EndpointSlice) bool {
	return a.AddressType == b.AddressType && hasLabels(a.Labels, b.Labels) &&
		equality.Semantic.DeepEqual(a.Endpoints, b.Endpoints) && equality.Semantic.DeepEqual(a.Ports, b.Ports)
}

// hasLabels reports whether have holds every label of want with its value.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Import is what a consumer of the ServiceImport imp gets: the derived
// Service, with the import's ports and no selector, and one EndpointSlice
// per collected slice of imp's namespace and name, of whichever cluster.
// collected must already be restricted to imp's namespace and name (by
// their labels); a slice of another namespace or Service is an error, so a
// caller's mistake never leaks endpoints across namespaces. The objects are
// in a fixed order: the Service, then the slices by name.
func Import(imp *unstructured.Unstructured, collected []discoveryv1.EndpointSlice) ([]*unstructured.Unstructured, error) {
	derived, err := DerivedServiceName(imp.GetNamespace(), imp.GetName())
	if err != nil {
		return nil, err
	}
	svc, err := derivedService(imp, derived)
	if err != nil {
		return nil, err
	}
	out := []*unstructured.Unstructured{svc}
	var sl []*unstructured.Unstructured
	for i := range collected {
		c := &collected[i]
		if c.Labels[LabelServiceNamespace] != imp.GetNamespace() || c.Labels[LabelServiceName] != imp.GetName() {
			return nil, fmt.Errorf("ServiceImport %s/%s: collected EndpointSlice %s/%s is of Service %s/%s", imp.GetNamespace(), imp.GetName(),
				c.Namespace, c.Name, c.Labels[LabelServiceNamespace], c.Labels[LabelServiceName])
		}
		cluster := c.Labels[LabelSourceCluster]
		s := &discoveryv1.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{
				Namespace: imp.GetNamespace(),
				Name:      ImportedSliceName(derived, cluster, c.Name),
				Labels: map[string]string{
					discoveryv1.LabelServiceName: derived,
					discoveryv1.LabelManagedBy:   ManagedBy,
					LabelSourceCluster:           cluster,
					LabelServiceName:             imp.GetName(),
				},
			},
			AddressType: c.AddressType,
			Endpoints:   endpoints(c.Endpoints),
			Ports:       slices.Clone(c.Ports),
		}
		u, err := toUnstructured(s)
		if err != nil {
			return nil, err
		}
		sl = append(sl, u)
	}
	slices.SortFunc(sl, func(a, b *unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return append(out, sl...), nil
}

// derivedService is the Service named derived for imp.
func derivedService(imp *unstructured.Unstructured, derived string) (*unstructured.Unstructured, error) {
	var spec struct {
		Type  string `json:"type"`
		Ports []struct {
			Name        string          `json:"name"`
			Protocol    corev1.Protocol `json:"protocol"`
			AppProtocol *string         `json:"appProtocol"`
			Port        int64           `json:"port"`
		} `json:"ports"`
	}
	raw, _, _ := unstructured.NestedMap(imp.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("ServiceImport %s/%s: spec: %w", imp.GetNamespace(), imp.GetName(), err)
	}
	if len(spec.Ports) == 0 {
		return nil, fmt.Errorf("ServiceImport %s/%s: spec.ports: at least one port is required for the derived Service", imp.GetNamespace(), imp.GetName())
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: imp.GetNamespace(),
			Name:      derived,
			Labels:    map[string]string{LabelServiceName: imp.GetName()},
		},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
	}
	switch spec.Type {
	case "", "ClusterSetIP":
	case "Headless":
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	default:
		return nil, fmt.Errorf("ServiceImport %s/%s: spec.type %q: must be ClusterSetIP or Headless", imp.GetNamespace(), imp.GetName(), spec.Type)
	}
	for i, p := range spec.Ports {
		if p.Port < 1 || p.Port > 65535 {
			return nil, fmt.Errorf("ServiceImport %s/%s: spec.ports[%d].port %d: must be between 1 and 65535", imp.GetNamespace(), imp.GetName(), i, p.Port)
		}
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: proto, AppProtocol: p.AppProtocol, Port: int32(p.Port)})
	}
	return toUnstructured(svc)
}

// toUnstructured converts a typed object to the manifest a Work carries,
// without the empty creationTimestamp and status the typed form has.
func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(m, "status")
	return &unstructured.Unstructured{Object: m}, nil
}

// ImportStatusClusters is a ServiceImport's status.clusters (the MCS
// API's list of the clusters that export the Service) for the collected
// slices of its namespace and name: each source cluster once, sorted, as
// the list items of the status.
func ImportStatusClusters(collected []discoveryv1.EndpointSlice) []any {
	seen := map[string]bool{}
	var names []string
	for i := range collected {
		c := collected[i].Labels[LabelSourceCluster]
		if c != "" && !seen[c] {
			seen[c] = true
			names = append(names, c)
		}
	}
	slices.Sort(names)
	out := make([]any, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]any{"cluster": n})
	}
	return out
}
