package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Mode says which processes a member cluster runs.
type Mode int

const (
	// Full runs kube-apiserver, kube-controller-manager, kube-scheduler and
	// kwok with fake nodes, so Deployments roll out to Ready pods.
	Full Mode = iota
	// APIServerOnly runs kube-apiserver alone: objects are stored but nothing
	// reconciles them, and no pods can run. It starts faster and costs less.
	APIServerOnly
)

// String returns "full" or "apiserver-only".
func (m Mode) String() string {
	if m == APIServerOnly {
		return "apiserver-only"
	}
	return "full"
}

// Options configures StartFleet. The zero value starts one Full cluster.
type Options struct {
	// Clusters is how many member clusters to start; default 1.
	Clusters int
	// NamePrefix names the clusters NamePrefix1 … NamePrefixN; default "member".
	NamePrefix string
	// Mode chooses Full (the default) or APIServerOnly clusters.
	Mode Mode
	// Node describes the fake nodes of each Full cluster.
	Node NodeSpec
	// Dir receives the PKI, kubeconfigs, etcd data and logs. When empty,
	// StartFleet makes a temporary directory and Stop removes it.
	Dir string
	// BinDir holds the pinned binaries; default BinDir().
	BinDir string
	// Timeout bounds the whole start, readiness included; default 2 minutes,
	// generous because the machine may be busy compiling.
	Timeout time.Duration
	// Detach starts the processes in their own sessions and without a parent
	// death signal, so they outlive the caller (the fleet command uses it).
	Detach bool
	// Logf receives progress lines; default discard.
	Logf func(format string, args ...any)
	// MetricsServer is the path of a metrics-server binary (the pinned
	// tool, testkit.MetricsServer). When set, each cluster, which must be
	// Full with one node, serves the metrics.k8s.io API from real
	// metrics-server scraping kwok's emulated kubelet metrics; a pod's
	// usage comes from its UsageCPUAnnotation and UsageMemoryAnnotation.
	// Only the tests that need metrics pay for it (about one more process
	// and a few seconds per cluster).
	MetricsServer string
	// CustomMetricsAdapter is the path of the pinned custom metrics
	// adapter (testkit.CustomMetricsAdapter); it needs MetricsServer. When
	// set, each cluster also serves custom.metrics.k8s.io (values a test
	// writes with Cluster.WriteCustomMetric) and external.metrics.k8s.io
	// (the adapter's fixed series) through its aggregation layer.
	CustomMetricsAdapter string
	// Aggregation configures every kube-apiserver's aggregation layer
	// (front-proxy PKI, request-header flags, aggregator routing to
	// endpoints), so an APIService can be served by a process of the test.
	Aggregation bool
	// Kubelet names the clusters (member1, …) whose pods' logs and exec
	// are served the way a kubelet serves them: kwok serves its node's
	// /containerLogs/ and /exec/ endpoints over TLS at the node's address
	// and port, and the apiserver reaches them with its --kubelet-client-*
	// flags. A container's log is what Cluster.WriteContainerLog wrote;
	// exec runs the command on this machine, in the cluster's directory.
	// In an APIServerOnly fleet these clusters run kwok too, with one node
	// and no controller manager or scheduler: a pod runs when it names
	// Cluster.NodeName(1). There, MetricsServer runs in these clusters
	// only. The other clusters pay nothing.
	Kubelet []string
}

// Fleet is a running set of member clusters sharing one etcd.
type Fleet struct {
	// Clusters are the members, in name order.
	Clusters []*Cluster
	// Dir holds everything the fleet wrote, including every process log.
	Dir string
	// StartupTime is how long StartFleet took until every cluster was ready.
	StartupTime time.Duration

	etcd     *process
	ownDir   bool
	stopOnce sync.Once
}

var namePrefixRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

func (o Options) withDefaults() (Options, error) {
	if o.Clusters == 0 {
		o.Clusters = 1
	}
	if o.Clusters < 0 {
		return o, fmt.Errorf("clusters must be positive, got %d", o.Clusters)
	}
	if o.NamePrefix == "" {
		o.NamePrefix = "member"
	}
	if !namePrefixRE.MatchString(o.NamePrefix) {
		return o, fmt.Errorf("name prefix %q is not a lowercase DNS label", o.NamePrefix)
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	o.Node = o.Node.withDefaults()
	if o.MetricsServer != "" && o.Node.Count != 1 || o.MetricsServer != "" && o.Mode != Full && len(o.Kubelet) == 0 {
		return o, fmt.Errorf("metrics need Full clusters of one node, or clusters named in Kubelet (kwok serves one node's kubelet metrics on its address), got %s with %d node(s)", o.Mode, o.Node.Count)
	}
	for _, name := range o.Kubelet {
		known := false
		for i := 1; i <= o.Clusters; i++ {
			known = known || name == fmt.Sprintf("%s%d", o.NamePrefix, i)
		}
		if !known {
			return o, fmt.Errorf("kubelet: %q is none of the fleet's clusters %s1 to %s%d", name, o.NamePrefix, o.NamePrefix, o.Clusters)
		}
	}
	if o.CustomMetricsAdapter != "" && o.Mode != Full {
		return o, errors.New("a custom metrics adapter needs Full clusters")
	}
	if o.CustomMetricsAdapter != "" && o.MetricsServer == "" {
		return o, errors.New("a custom metrics adapter needs MetricsServer too (it runs beside the metrics pipeline)")
	}
	if o.BinDir == "" {
		dir, err := BinDir()
		if err != nil {
			return o, err
		}
		o.BinDir = dir
	}
	return o, nil
}

// StartFleet starts opts.Clusters member clusters in parallel and returns once
// every one is ready: /readyz answers and, in Full mode, the default
// ServiceAccount exists and every node is Ready and schedulable. On error it
// stops whatever it started; the logs stay in the directory named in the error.
func StartFleet(ctx context.Context, opts Options) (*Fleet, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	if err := checkBinaries(opts.BinDir, opts.Mode); err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	for name, path := range map[string]string{"metrics-server": opts.MetricsServer, "custom metrics adapter": opts.CustomMetricsAdapter} {
		if path == "" {
			continue
		}
		if info, err := os.Stat(path); err != nil || info.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("start fleet: %w: %s %s is not an executable; run `make tools` to build it", ErrBinariesMissing, name, path)
		}
	}
	f := &Fleet{Dir: opts.Dir}
	if f.Dir == "" {
		if f.Dir, err = os.MkdirTemp("", "flotilla-testenv-"); err != nil {
			return nil, fmt.Errorf("start fleet: %w", err)
		}
		f.ownDir = true
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if err := f.start(ctx, opts); err != nil {
		f.stopProcesses()
		return nil, fmt.Errorf("start fleet (logs in %s): %w", f.Dir, err)
	}
	f.StartupTime = since(begin)
	opts.Logf("testenv: %d %s cluster(s) ready in %s; logs in %s", len(f.Clusters), opts.Mode, f.StartupTime, f.Dir)
	return f, nil
}

func (f *Fleet) start(ctx context.Context, opts Options) error {
	// Unique even across test binaries that share an etcd by accident.
	prefix := "/flotilla-testenv-" + randomHex(6)
	for i := 1; i <= opts.Clusters; i++ {
		name := fmt.Sprintf("%s%d", opts.NamePrefix, i)
		dir := filepath.Join(f.Dir, name)
		kubelet := slices.Contains(opts.Kubelet, name)
		metrics := opts.MetricsServer
		if opts.Mode == APIServerOnly && !kubelet {
			metrics = ""
		}
		f.Clusters = append(f.Clusters, &Cluster{
			Name:           name,
			Dir:            dir,
			KubeconfigPath: filepath.Join(dir, "kubeconfig"),
			mode:           opts.Mode,
			binDir:         opts.BinDir,
			detach:         opts.Detach,
			etcdPrefix:     prefix + "/" + name,
			node:           opts.Node,
			metricsServer:  metrics,
			customMetrics:  opts.CustomMetricsAdapter,
			aggregation:    opts.Aggregation,
			kubelet:        kubelet,
		})
	}

	// PKI (RSA key generation) overlaps etcd's start.
	pkiErrs := make([]error, len(f.Clusters))
	var pkiDone sync.WaitGroup
	for i, c := range f.Clusters {
		pkiDone.Go(func() {
			c.pki, pkiErrs[i] = newPKI(filepath.Join(c.Dir, "pki"))
			c.Token, c.CAData = c.pki.token, c.pki.caCert
			c.WebhookClientCAFile = c.pki.webhookClientCAFile()
			if pkiErrs[i] == nil && (c.aggregation || c.metricsServer != "") {
				pkiErrs[i] = writeFrontProxy(c.pki)
			}
			if pkiErrs[i] == nil && c.kubelet {
				pkiErrs[i] = writeKubeletClient(c.pki)
			}
		})
	}
	etcdDir := filepath.Join(f.Dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return err
	}
	etcd, etcdURL, err := startEtcd(ctx, opts.BinDir, etcdDir, opts.Detach)
	pkiDone.Wait()
	if err != nil {
		return err
	}
	f.etcd = etcd
	opts.Logf("testenv: etcd ready at %s", etcdURL)
	if err := errors.Join(pkiErrs...); err != nil {
		return fmt.Errorf("make pki: %w", err)
	}

	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(f.Clusters))
	var wg sync.WaitGroup
	for i, c := range f.Clusters {
		c.etcdURL = etcdURL
		wg.Go(func() {
			if errs[i] = c.start(ctx, opts.Logf); errs[i] != nil {
				cancel(errSiblingFailed)
			}
		})
	}
	wg.Wait()
	if errors.Is(parent.Err(), context.Canceled) {
		return fmt.Errorf("interrupted: %w", context.Cause(parent))
	}
	var report []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, errSiblingFailed) {
			report = append(report, err)
		}
	}
	return errors.Join(report...)
}

// Cluster returns the member named name, or nil.
func (f *Fleet) Cluster(name string) *Cluster {
	for _, c := range f.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Stop ends every process the fleet started (SIGTERM, then SIGKILL after a
// grace period) and, if StartFleet made the directory, removes it. It is
// safe to call more than once.
func (f *Fleet) Stop() error {
	var err error
	f.stopOnce.Do(func() {
		f.stopProcesses()
		if f.ownDir {
			err = os.RemoveAll(f.Dir)
		}
	})
	if err != nil {
		return fmt.Errorf("stop fleet: %w", err)
	}
	return nil
}

// allProcesses lists every process the fleet started, etcd last.
func (f *Fleet) allProcesses() []*process {
	var procs []*process
	for _, c := range f.Clusters {
		procs = append(procs, c.processes()...)
	}
	if f.etcd != nil {
		procs = append(procs, f.etcd)
	}
	return procs
}

// stopProcesses stops the clusters' processes together, then etcd, so that
// apiservers do not spend their shutdown retrying a vanished etcd.
func (f *Fleet) stopProcesses() {
	var procs []*process
	for _, c := range f.Clusters {
		procs = append(procs, c.processes()...)
	}
	stopAll(procs, stopGrace)
	if f.etcd != nil {
		f.etcd.stop(stopGrace)
	}
}
