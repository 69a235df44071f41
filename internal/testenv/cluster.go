package testenv

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiserverStopGrace is StopAPIServer's wait between SIGTERM and SIGKILL.
const apiserverStopGrace = time.Second

// restartTimeout bounds StartAPIServer when the caller's context has no
// earlier deadline.
const restartTimeout = 60 * time.Second

// Cluster is one running member cluster. Its exported fields are fixed for
// the cluster's life, including across StopAPIServer and StartAPIServer.
type Cluster struct {
	// Name is the cluster's name (member1, member2, …) and its kubeconfig context.
	Name string
	// Host is the apiserver URL, https://127.0.0.1:<port>.
	Host string
	// Token is the bearer token of a system:masters user.
	Token string
	// CAData is the PEM CA that signed the apiserver's serving certificate.
	CAData []byte
	// WebhookClientCAFile is the PEM CA that signed the client certificate
	// (common name WebhookClientName) the apiserver presents to admission
	// webhooks: what a webhook of this cluster passes as
	// --webhook-client-ca.
	WebhookClientCAFile string
	// KubeconfigPath is a kubeconfig file holding only this cluster.
	KubeconfigPath string
	// Dir holds the cluster's PKI, kubeconfig and process logs.
	Dir string

	mode       Mode
	binDir     string
	detach     bool
	pki        pki
	etcdURL    string
	etcdPrefix string
	node       NodeSpec
	client     kubernetes.Interface
	// metricsServer is Options.MetricsServer: when set, the cluster runs
	// the metrics pipeline (metrics.go), which needs the aggregation layer.
	metricsServer string
	// customMetrics is Options.CustomMetricsAdapter (custommetrics.go).
	customMetrics string
	// customMetricsWrite is the address of that adapter's write endpoint.
	customMetricsWrite string
	// aggregation adds aggregationArgs to the apiserver's flags.
	aggregation bool
	// kubelet is Options.Kubelet naming the cluster (kubelet.go).
	kubelet bool

	mu   sync.Mutex // serialises StopAPIServer and StartAPIServer
	port int
	// metricsPort is metrics-server's, when it runs; customMetricsPort the
	// custom metrics adapter's.
	metricsPort, customMetricsPort int
	apiserver                      *process
	components                     []*process // kube-controller-manager, kube-scheduler, kwok
}

// RESTConfig returns a new *rest.Config for the cluster's admin user; the
// caller may change it freely. Client-side rate limits are raised above
// client-go's defaults so tests are not throttled.
func (c *Cluster) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            c.Host,
		BearerToken:     c.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: bytes.Clone(c.CAData)},
		QPS:             50,
		Burst:           100,
	}
}

// StopAPIServer stops the cluster's kube-apiserver, so the member is
// unreachable until StartAPIServer. Its other processes keep running and
// retry, as on a real network partition.
func (c *Cluster) StopAPIServer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	// On SIGTERM the apiserver stops listening at once but then waits for its
	// watchers (the controllers, which stay up) for longer than a test should.
	// It keeps no state of its own, so a short grace loses nothing.
	c.apiserver.stop(apiserverStopGrace)
}

// StartAPIServer restarts a stopped kube-apiserver on the same port, with the
// same certificates and etcd prefix, so clients and stored objects carry over.
// It returns once /readyz succeeds. It fails if the server is running.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	if err := c.runAPIServer(ctx, c.apiserver, c.port); err != nil {
		return fmt.Errorf("restart cluster %s: %w", c.Name, err)
	}
	return nil
}

// processes lists every process the cluster has started.
func (c *Cluster) processes() []*process {
	c.mu.Lock()
	defer c.mu.Unlock()
	procs := append([]*process(nil), c.components...)
	if c.apiserver != nil {
		procs = append(procs, c.apiserver)
	}
	return procs
}

// start brings the cluster up and waits until it is ready for its mode.
func (c *Cluster) start(ctx context.Context, logf func(string, ...any)) error {
	begin := time.Now()
	if err := c.startAPIServer(ctx); err != nil {
		return err
	}
	logf("testenv: %s kube-apiserver ready at %s (%s)", c.Name, c.Host, since(begin))
	if err := writeKubeconfig(c.KubeconfigPath, []*Cluster{c}); err != nil {
		return fmt.Errorf("write kubeconfig of cluster %s: %w", c.Name, err)
	}
	client, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return fmt.Errorf("client for cluster %s: %w", c.Name, err)
	}
	c.client = client

	watch := []*process{c.apiserver}
	if err := waitFor(ctx, "namespace default", c.apiserver, watch, func(ctx context.Context) error {
		_, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if c.mode == APIServerOnly {
		if c.kubelet {
			if err := c.startKubeletOnly(ctx); err != nil {
				return err
			}
			logf("testenv: %s ready with kwok's kubelet endpoints (%s)", c.Name, since(begin))
		}
		return nil
	}

	if err := c.startComponents(); err != nil {
		return err
	}
	kcm, kwok := c.component(binKCM), c.component(binKwok)
	watch = c.processes()
	for i := 1; i <= c.node.Count; i++ {
		if err := createNode(ctx, client, c.nodeName(i), c.node); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	if err := waitFor(ctx, "serviceaccount default/default", kcm, watch, func(ctx context.Context) error {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	for i := 1; i <= c.node.Count; i++ {
		name := c.nodeName(i)
		if err := waitFor(ctx, "node "+name+" Ready", kwok, watch, func(ctx context.Context) error {
			return nodeSchedulable(ctx, client, name)
		}); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	if c.metricsServer != "" {
		if err := c.registerAPIService(ctx, metricsServerName, c.metricsPort, c.component(binMetricsServer), metricsAPI); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	if c.customMetrics != "" {
		if err := c.registerAPIService(ctx, customMetricsName, c.customMetricsPort, c.component(binCustomMetrics), customMetricsAPIs...); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	logf("testenv: %s ready with %d node(s) (%s)", c.Name, c.node.Count, since(begin))
	return nil
}

func (c *Cluster) nodeName(i int) string { return fmt.Sprintf("%s-node-%d", c.Name, i) }

// startAPIServer starts kube-apiserver on a free port, and retries on a new
// port when another process took the one it was given.
func (c *Cluster) startAPIServer(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		p := c.apiserverProcess(port)
		err = c.runAPIServer(ctx, p, port)
		if err == nil {
			c.mu.Lock()
			c.port, c.apiserver = port, p
			c.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
			c.mu.Unlock()
			return nil
		}
		if attempt < startAttempts && p.logMentions(addrInUse) {
			continue
		}
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
}

// runAPIServer starts p, listening on port, and waits for /readyz; on failure
// it stops p again.
func (c *Cluster) runAPIServer(ctx context.Context, p *process, port int) error {
	if err := p.start(); err != nil {
		return err
	}
	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	probe, err := kubernetes.NewForConfig(&rest.Config{
		Host:            host,
		BearerToken:     c.pki.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.caCert},
		Timeout:         2 * time.Second,
	})
	if err != nil {
		p.stop(stopGrace)
		return err
	}
	err = waitFor(ctx, "kube-apiserver /readyz", p, []*process{p}, func(ctx context.Context) error {
		body, err := probe.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil && len(body) > 0 {
			return fmt.Errorf("%w: %s", err, body)
		}
		return err
	})
	if err != nil {
		p.stop(stopGrace)
	}
	return err
}

func (c *Cluster) apiserverProcess(port int) *process {
	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	p := &process{
		cluster: c.Name,
		name:    binAPIServer,
		path:    filepath.Join(c.binDir, binAPIServer),
		args: []string{
			"--etcd-servers=" + c.etcdURL,
			"--etcd-prefix=" + c.etcdPrefix,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--tls-cert-file=" + c.pki.servingCert(),
			"--tls-private-key-file=" + c.pki.servingKey(),
			"--client-ca-file=" + c.pki.caFile(),
			"--token-auth-file=" + c.pki.tokenAuthFile(),
			"--authorization-mode=RBAC",
			"--service-account-issuer=" + host,
			"--service-account-key-file=" + c.pki.saPublicKey(),
			"--service-account-signing-key-file=" + c.pki.saPrivateKey(),
			"--service-cluster-ip-range=10.96.0.0/16",
			// The only endpoint would be loopback, which the reconciler rejects noisily.
			"--endpoint-reconciler-type=none",
			"--allow-privileged=true",
			// Admission webhooks are called with a client certificate, so a
			// webhook that verifies its caller (flotilla's) works here.
			"--admission-control-config-file=" + c.pki.admissionConfigFile(),
		},
		logPath: filepath.Join(c.Dir, binAPIServer+".log"),
		detach:  c.detach,
	}
	if c.aggregation || c.metricsServer != "" {
		p.args = append(p.args, aggregationArgs(c.pki)...)
	}
	if c.kubelet {
		p.args = append(p.args, kubeletArgs(c.pki)...)
	}
	return p
}

// startComponents starts kube-controller-manager (it creates the default
// ServiceAccount and lifts the not-ready taint), kube-scheduler (kwok does not
// bind pods) and kwok (it plays kubelet for every node).
func (c *Cluster) startComponents() error {
	kc := "--kubeconfig=" + c.KubeconfigPath
	stages, err := writeKwokStages(c.Dir)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	specs := []struct {
		name string
		args []string
	}{
		{binKCM, []string{kc, "--leader-elect=false", "--secure-port=0",
			"--service-account-private-key-file=" + c.pki.saPrivateKey(),
			"--root-ca-file=" + c.pki.caFile()}},
		{binScheduler, []string{kc, "--leader-elect=false", "--secure-port=0"}},
		// kwok must renew node Leases: without them it updates node status only
		// every ~55 s, past kube-controller-manager's 50 s grace period, and
		// the node and its pods turn NotReady for good.
		// Its pod stages make pods of an image tagged BrokenImageTag never Ready.
		{binKwok, []string{kc, "--manage-all-nodes=true", "--node-lease-duration-seconds=40", "--config=" + stages}},
	}
	args, err := c.kwokServerArgs()
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	specs[2].args = append(specs[2].args, args...)
	procs := make([]*process, 0, len(specs))
	for _, s := range specs {
		p := &process{
			cluster: c.Name,
			name:    s.name,
			path:    filepath.Join(c.binDir, s.name),
			args:    s.args,
			logPath: filepath.Join(c.Dir, s.name+".log"),
			detach:  c.detach,
		}
		if err := p.start(); err != nil {
			return err
		}
		procs = append(procs, p)
		c.mu.Lock()
		c.components = procs
		c.mu.Unlock()
	}
	if c.metricsServer != "" {
		if err := c.startMetricsServer(); err != nil {
			return err
		}
	}
	if c.customMetrics != "" {
		return c.startCustomMetricsAdapter()
	}
	return nil
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
