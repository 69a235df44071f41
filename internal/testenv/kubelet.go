package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet endpoints of a cluster named in Options.Kubelet: kwok serves
// its node's /containerLogs/ and /exec/ (kubelet's paths) over TLS at the
// node's InternalIP and status port, and the cluster's kube-apiserver
// reaches them as it reaches a real kubelet, with its --kubelet-client-*
// flags, verifying kwok's serving certificate against the cluster CA. So
// `pods/log` and `pods/exec` go the whole way a member's do, through the
// apiserver's kubelet client and its upgrade proxy.
const (
	kwokKubeletFileName = "kwok-kubelet.yaml"
	containerLogName    = "containers.log"
	kubeletClientName   = "kube-apiserver-kubelet-client"
)

func (c *Cluster) kwokKubeletFile() string { return filepath.Join(c.Dir, kwokKubeletFileName) }

// ContainerLogPath is the file every container of the cluster's kwok pods
// logs from (kwok reads it in the CRI log format on each request); see
// WriteContainerLog.
func (c *Cluster) ContainerLogPath() string { return filepath.Join(c.Dir, containerLogName) }

// NodeName is the name of the cluster's i-th kwok node, from 1.
func (c *Cluster) NodeName(i int) string { return c.nodeName(i) }

// WriteContainerLog replaces the log that every container of the cluster's
// pods shows with lines, each on stdout and stamped now, in the CRI format
// kubelet's log reader expects. It fails on a cluster not named in
// Options.Kubelet, whose pods have no log to serve.
func (c *Cluster) WriteContainerLog(lines ...string) error {
	if !c.kubelet {
		return fmt.Errorf("write container log of cluster %s: not started with Options.Kubelet", c.Name)
	}
	var b strings.Builder
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", now, l)
	}
	if err := os.WriteFile(c.ContainerLogPath(), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write container log of cluster %s: %w", c.Name, err)
	}
	return nil
}

// kwokKubeletConfig is kwok's ClusterLogs (every pod's containers log from
// logFile) and ClusterExec (every pod's exec runs the command on this
// machine, in dir: kwok runs no containers).
func kwokKubeletConfig(logFile, dir string) string {
	return fmt.Sprintf(`---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: every-pod
spec:
  logs:
  - logsFile: %q
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: every-pod
spec:
  execs:
  - local:
      workDir: %q
`, logFile, dir)
}

// kwokServerArgs are kwok's extra flags when it serves a kubelet's
// endpoints (metrics, logs, exec): its server on a free port, named as the
// node's address and port, and the configurations of what it serves.
func (c *Cluster) kwokServerArgs() ([]string, error) {
	if c.metricsServer == "" && !c.kubelet {
		return nil, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := c.kwokServing(port)
	if c.metricsServer != "" {
		if err := os.WriteFile(c.kwokMetricsFile(), []byte(kwokMetricsConfig(c.nodeName(1))), 0o600); err != nil {
			return nil, fmt.Errorf("write kwok metrics: %w", err)
		}
		args = append(args, "--config="+c.kwokMetricsFile())
	}
	if c.kubelet {
		if err := os.WriteFile(c.ContainerLogPath(), nil, 0o600); err != nil {
			return nil, fmt.Errorf("write container log: %w", err)
		}
		if err := os.WriteFile(c.kwokKubeletFile(), []byte(kwokKubeletConfig(c.ContainerLogPath(), c.Dir)), 0o600); err != nil {
			return nil, fmt.Errorf("write kwok kubelet config: %w", err)
		}
		args = append(args, "--config="+c.kwokKubeletFile())
	}
	return args, nil
}

// The client identity the apiserver presents to kwok's kubelet endpoints.
func (p pki) kubeletClientCert() string { return filepath.Join(p.dir, "kubelet-client.crt") }
func (p pki) kubeletClientKey() string  { return filepath.Join(p.dir, "kubelet-client.key") }

// writeKubeletClient gives the apiserver a client certificate for kubelets,
// as kubeadm's apiserver-kubelet-client. kwok asks for none; the flags are
// those of a production apiserver, so the path is the same.
func writeKubeletClient(p pki) error {
	_, cert, key, err := clientIdentity("flotilla-testenv-kubelet-client-ca", kubeletClientName)
	if err != nil {
		return err
	}
	if err := os.WriteFile(p.kubeletClientCert(), cert, 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.kubeletClientKey(), key, 0o600)
}

// kubeletArgs are the apiserver's flags for reaching kubelets: by the
// node's InternalIP (kwok's --node-ip), verifying the serving certificate
// kwok presents (the cluster's, signed by the cluster CA for 127.0.0.1).
func kubeletArgs(p pki) []string {
	return []string{
		"--kubelet-client-certificate=" + p.kubeletClientCert(),
		"--kubelet-client-key=" + p.kubeletClientKey(),
		"--kubelet-certificate-authority=" + p.caFile(),
		"--kubelet-preferred-address-types=InternalIP",
	}
}

// startKubeletOnly brings up kwok alone (and metrics-server, with
// Options.MetricsServer) in an APIServerOnly cluster named in
// Options.Kubelet: one node, no kube-controller-manager or scheduler, so a
// pod runs when it names the node (NodeName(1)) and the test creates the
// default ServiceAccount itself.
func (c *Cluster) startKubeletOnly(ctx context.Context) error {
	args, err := c.kwokServerArgs()
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	kwok := &process{
		cluster: c.Name,
		name:    binKwok,
		path:    filepath.Join(c.binDir, binKwok),
		args:    append([]string{"--kubeconfig=" + c.KubeconfigPath, "--manage-all-nodes=true"}, args...),
		logPath: filepath.Join(c.Dir, binKwok+".log"),
		detach:  c.detach,
	}
	if err := kwok.start(); err != nil {
		return err
	}
	c.mu.Lock()
	c.components = append(c.components, kwok)
	c.mu.Unlock()
	if c.metricsServer != "" {
		if err := c.startMetricsServer(); err != nil {
			return err
		}
	}
	node := c.node
	node.Count = 1
	if err := createNode(ctx, c.client, c.nodeName(1), node); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	// Without kube-controller-manager the not-ready taint stays; it only
	// keeps a scheduler away, and none runs here.
	if err := waitFor(ctx, "node "+c.nodeName(1)+" Ready", kwok, c.processes(), func(ctx context.Context) error {
		n, err := c.client.CoreV1().Nodes().Get(ctx, c.nodeName(1), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(n.Status.Conditions, func(cond corev1.NodeCondition) bool {
			return cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue
		}) {
			return errors.New("node is not Ready")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if c.metricsServer != "" {
		if err := c.registerAPIService(ctx, metricsServerName, c.metricsPort, c.component(binMetricsServer), metricsAPI); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

// component is the running process of the cluster named name (kwok,
// metrics-server, …), or nil.
func (c *Cluster) component(name string) *process {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.components {
		if p.name == name {
			return p
		}
	}
	return nil
}
