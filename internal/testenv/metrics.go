package testenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The metrics pipeline of a member started with Options.MetricsServer:
// kwok serves kubelet's /metrics/resource for the member's one node (a
// Metric) with each pod's usage taken from its annotations (a
// ClusterResourceUsage), metrics-server scrapes it, and the member's
// kube-apiserver serves metrics-server's API through the aggregation
// layer as the APIService v1beta1.metrics.k8s.io.
const (
	// UsageCPUAnnotation sets a pod's CPU usage in a member with metrics,
	// as a quantity ("250m"); a pod without it uses 1m.
	UsageCPUAnnotation = "kwok.x-k8s.io/usage-cpu"
	// UsageMemoryAnnotation sets a pod's memory usage ("64Mi"); a pod
	// without it uses 1Mi.
	UsageMemoryAnnotation = "kwok.x-k8s.io/usage-memory"
	// MetricResolution is metrics-server's scrape interval (its minimum):
	// a changed usage shows in the metrics API within about two of it.
	MetricResolution = 10 * time.Second

	binMetricsServer    = "metrics-server"
	metricsServerName   = "metrics-server"
	metricsAPIService   = "v1beta1.metrics.k8s.io"
	kwokMetricsFileName = "kwok-metrics.yaml"
)

func (c *Cluster) kwokMetricsFile() string { return filepath.Join(c.Dir, kwokMetricsFileName) }

// kwokMetricsConfig is kwok v0.7.0's kustomize/metrics/resource Metric,
// served at kubelet's own path for the member's one node (metrics-server
// asks every node's address and port for /metrics/resource, and kwok
// names the node of a path without {nodeName} by the Metric's name), and
// its kustomize/metrics/usage ClusterResourceUsage, which reads a pod's
// usage from its annotations.
func kwokMetricsConfig(node string) string {
	return fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Metric
metadata:
  name: %s
spec:
  path: /metrics/resource
  metrics:
  - {name: scrape_error, dimension: node, kind: gauge, value: '0'}
  - name: container_start_time_seconds
    dimension: container
    kind: gauge
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: pod.SinceSecond()
  - name: container_cpu_usage_seconds_total
    dimension: container
    kind: counter
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: pod.CumulativeUsage("cpu", container.name)
  - name: container_memory_working_set_bytes
    dimension: container
    kind: gauge
    labels: [{name: container, value: container.name}, {name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: pod.Usage("memory", container.name)
  - name: pod_cpu_usage_seconds_total
    dimension: pod
    kind: counter
    labels: [{name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: pod.CumulativeUsage("cpu")
  - name: pod_memory_working_set_bytes
    dimension: pod
    kind: gauge
    labels: [{name: namespace, value: pod.metadata.namespace}, {name: pod, value: pod.metadata.name}]
    value: pod.Usage("memory")
  - {name: node_cpu_usage_seconds_total, dimension: node, kind: counter, value: node.CumulativeUsage("cpu")}
  - {name: node_memory_working_set_bytes, dimension: node, kind: gauge, value: node.Usage("memory")}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata:
  name: usage-from-annotation
spec:
  usages:
  - usage:
      cpu:
        expression: |
          %[2]q in pod.metadata.annotations
          ? Quantity(pod.metadata.annotations[%[2]q])
          : Quantity("1m")
      memory:
        expression: |
          %[3]q in pod.metadata.annotations
          ? Quantity(pod.metadata.annotations[%[3]q])
          : Quantity("1Mi")
`, node, UsageCPUAnnotation, UsageMemoryAnnotation)
}

// kwokServing are kwok's flags when it serves metrics: the node's address
// and kubelet port are kwok's own server, over TLS with the cluster's
// serving certificate.
func (c *Cluster) kwokServing(port int) []string {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	return []string{"--node-ip=127.0.0.1", "--node-port=" + strconv.Itoa(port), "--server-address=" + addr,
		"--tls-cert-file=" + c.pki.servingCert(), "--tls-private-key-file=" + c.pki.servingKey()}
}

// metricsServerProcess is metrics-server on port, scraping every node at
// its status port over TLS it does not verify (kwok's certificate names
// no node), as the admin of the cluster.
func (c *Cluster) metricsServerProcess(port int) *process {
	kc := c.KubeconfigPath
	return &process{
		cluster: c.Name,
		name:    binMetricsServer,
		path:    c.metricsServer,
		args: []string{
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
			"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--tls-cert-file=" + c.pki.servingCert(), "--tls-private-key-file=" + c.pki.servingKey(),
			"--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port", "--kubelet-insecure-tls",
			"--metric-resolution=" + MetricResolution.String(), "--kubelet-request-timeout=5s",
		},
		logPath: filepath.Join(c.Dir, binMetricsServer+".log"),
		detach:  c.detach,
	}
}

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// apiServiceSpec is one API group version an APIService routes to a
// process of the test.
type apiServiceSpec struct {
	Name, Group, Version string
}

// metricsAPI is metrics-server's API.
var metricsAPI = apiServiceSpec{Name: metricsAPIService, Group: "metrics.k8s.io", Version: "v1beta1"}

// registerAPIService makes the process p, listening on port, serve the
// member's apis: a Service of type ExternalName named service (the
// aggregation layer resolves it to localhost; there is no service network)
// and an APIService each; then waits until the aggregation layer reports
// each Available, so the first test request finds it.
func (c *Cluster) registerAPIService(ctx context.Context, service string, port int, p *process, apis ...apiServiceSpec) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: service},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(port)}}},
	}
	if _, err := c.client.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create service %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	for _, api := range apis {
		apiService := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": api.Name},
			"spec": map[string]any{
				"group": api.Group, "version": api.Version, "groupPriorityMinimum": int64(100), "versionPriority": int64(100),
				"insecureSkipTLSVerify": true,
				"service":               map[string]any{"namespace": metav1.NamespaceSystem, "name": service, "port": int64(port)},
			},
		}}
		if _, err := dyn.Resource(apiServiceGVR).Create(ctx, apiService, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create apiservice %s: %w", api.Name, err)
		}
	}
	for _, api := range apis {
		if err := waitFor(ctx, "apiservice "+api.Name+" Available", p, c.processes(), func(ctx context.Context) error {
			got, err := dyn.Resource(apiServiceGVR).Get(ctx, api.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, raw := range conds {
				cond, _ := raw.(map[string]any)
				if cond["type"] == "Available" {
					if cond["status"] == "True" {
						return nil
					}
					return fmt.Errorf("not available: %v", cond["message"])
				}
			}
			return errors.New("no Available condition yet")
		}); err != nil {
			return err
		}
	}
	return nil
}

// startMetricsServer starts metrics-server on a free port, after the
// other components.
func (c *Cluster) startMetricsServer() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	p := c.metricsServerProcess(port)
	if err := p.start(); err != nil {
		return err
	}
	c.mu.Lock()
	c.components = append(c.components, p)
	c.metricsPort = port
	c.mu.Unlock()
	return nil
}
