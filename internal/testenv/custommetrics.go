package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
)

// A member started with Options.CustomMetricsAdapter also runs the pinned
// custom metrics adapter (tools/custom-metrics: the in-memory test
// provider of sigs.k8s.io/custom-metrics-apiserver behind its adapter
// server), registered as the member's custom.metrics.k8s.io and
// external.metrics.k8s.io. Custom metric values are what the test writes;
// the external series are the provider's own fixed ones (ExternalMetric*).
const (
	binCustomMetrics  = "custom-metrics-adapter"
	customMetricsName = "custom-metrics-adapter"

	// ExternalMetricName is a series every adapter serves with the value
	// ExternalMetricValue and no labels.
	ExternalMetricName = "other-external-metric"
	// ExternalMetricValue is ExternalMetricName's value.
	ExternalMetricValue = 44
)

// customMetricsAPIs are the adapter's APIs, at the versions Kubernetes'
// autoscaler asks for first.
var customMetricsAPIs = []apiServiceSpec{
	{Name: "v1beta2.custom.metrics.k8s.io", Group: "custom.metrics.k8s.io", Version: "v1beta2"},
	{Name: "v1beta1.custom.metrics.k8s.io", Group: "custom.metrics.k8s.io", Version: "v1beta1"},
	{Name: "v1beta1.external.metrics.k8s.io", Group: "external.metrics.k8s.io", Version: "v1beta1"},
}

// startCustomMetricsAdapter starts the adapter on a free port, with its
// write endpoint on another, after metrics-server.
func (c *Cluster) startCustomMetricsAdapter() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	writePort, err := freePort()
	if err != nil {
		return err
	}
	kc := c.KubeconfigPath
	write := "127.0.0.1:" + strconv.Itoa(writePort)
	p := &process{
		cluster: c.Name,
		name:    binCustomMetrics,
		path:    c.customMetrics,
		args: []string{
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
			"--lister-kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--tls-cert-file=" + c.pki.servingCert(), "--tls-private-key-file=" + c.pki.servingKey(),
			"--write-address=" + write,
		},
		logPath: filepath.Join(c.Dir, binCustomMetrics+".log"),
		detach:  c.detach,
	}
	if err := p.start(); err != nil {
		return err
	}
	c.mu.Lock()
	c.components = append(c.components, p)
	c.customMetricsPort, c.customMetricsWrite = port, write
	c.mu.Unlock()
	return nil
}

// WriteCustomMetric sets, in the cluster's custom metrics adapter, metric
// of the namespaced object resource/name (resource as the API names it:
// "pods", "services") to value, a quantity ("30", "250m"). The adapter
// serves it at once through custom.metrics.k8s.io.
func (c *Cluster) WriteCustomMetric(ctx context.Context, namespace, resource, name, metric, value string) error {
	if c.customMetricsWrite == "" {
		return fmt.Errorf("cluster %s runs no custom metrics adapter (Options.CustomMetricsAdapter)", c.Name)
	}
	body, err := json.Marshal(value)
	if err != nil {
		return err
	}
	u := fmt.Sprintf("http://%s/write-metrics/namespaces/%s/%s/%s/%s", c.customMetricsWrite,
		url.PathEscape(namespace), url.PathEscape(resource), url.PathEscape(name), url.PathEscape(metric))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cluster %s: write metric %s of %s %s/%s: %w", c.Name, metric, resource, namespace, name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("cluster %s: write metric %s of %s %s/%s: %s: %s", c.Name, metric, resource, namespace, name, resp.Status, msg)
	}
	return nil
}
