package testenv

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// APIService describes an aggregated API served by a local process.
type APIService struct {
	// Group and Version are the API's group and version.
	Group, Version string
	// Namespace and Service name the Service the APIService points at.
	Namespace, Service string
	// IP and Port are where the process listens. IP must not be loopback:
	// the apiserver refuses loopback endpoints (NonLoopbackIPv4).
	IP   string
	Port int
	// CABundle is the PEM CA that signed the process' serving certificate,
	// which must be valid for <Service>.<Namespace>.svc.
	CABundle []byte
}

// RegisterAPIService makes an aggregating cluster (Options.Aggregation)
// route svc's group-version to a local process: a selector-less Service,
// an EndpointSlice naming IP:Port (the aggregator routes to endpoints), and
// the APIService trusting CABundle. The namespace must exist.
func (c *Cluster) RegisterAPIService(ctx context.Context, svc APIService) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Services(svc.Namespace).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc.Service},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s/%s: %w", svc.Namespace, svc.Service, err)
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(svc.Namespace).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc.Service, Labels: map[string]string{discoveryv1.LabelServiceName: svc.Service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{svc.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(svc.Port))}},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create EndpointSlice %s/%s: %w", svc.Namespace, svc.Service, err)
	}
	dc, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	name := svc.Version + "." + svc.Group
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"group": svc.Group, "version": svc.Version,
			"service":              map[string]any{"namespace": svc.Namespace, "name": svc.Service, "port": int64(443)},
			"caBundle":             base64.StdEncoding.EncodeToString(svc.CABundle),
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		},
	}}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	if _, err := dc.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create APIService %s: %w", name, err)
	}
	return nil
}

// NonLoopbackIPv4 is an IPv4 address of this machine that is not loopback,
// for a process an aggregating apiserver must reach, or "" when it has none.
func NonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}
