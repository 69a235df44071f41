package testenv

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// APIService describes an aggregated API served by a local process.
type APIService struct {
	// Group and Version are the API's group and version.
	Group, Version string
	// Namespace and Service name the Service the APIService points at.
	Namespace, Service string
	// Port is where the process listens on this machine's loopback
	// address (localhost), which the aggregation layer dials.
	Port int
	// CABundle is the PEM CA that signed the process' serving certificate,
	// which must be valid for <Service>.<Namespace>.svc.
	CABundle []byte
}

// RegisterAPIService makes an aggregating cluster (Options.Aggregation)
// route svc's group-version to a local process listening on localhost:Port:
// a Service of type ExternalName naming localhost, which the aggregation
// layer resolves to localhost and the APIService's port (there is no
// service network here, and an EndpointSlice may not name a loopback
// address), and the APIService trusting CABundle, whose certificate the
// aggregation layer verifies for <Service>.<Namespace>.svc as it would in a
// cluster. The namespace must exist.
func (c *Cluster) RegisterAPIService(ctx context.Context, svc APIService) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Services(svc.Namespace).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc.Service},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(svc.Port)}}}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Service %s/%s: %w", svc.Namespace, svc.Service, err)
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
			"service":              map[string]any{"namespace": svc.Namespace, "name": svc.Service, "port": int64(svc.Port)},
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
