//go:build linux

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Settings of the restart benchmarks, from the environment; the fleet size
// comes from FLOTILLA_BENCH_CLUSTERS and FLOTILLA_BENCH_TEMPLATES as in
// BenchmarkContinuousScale.
const (
	// envRestartQuiet is how long no counted write may happen, with every
	// queue empty, before a process counts as settled; default 15s.
	envRestartQuiet = "FLOTILLA_BENCH_QUIET"
	// envFlapFor and envFlapEvery shape the flapping Cluster; default 60s and 3s.
	envFlapFor   = "FLOTILLA_BENCH_FLAP_FOR"
	envFlapEvery = "FLOTILLA_BENCH_FLAP_EVERY"
)

// flapCluster is the Cluster the flapping benchmark turns Ready and
// NotReady: region r4, so the region-affinity and the named-cluster
// policies (bench-1, bench-3) cannot place anything on it.
const flapCluster = "member-0005"

// restartFleet is a host filled by createScaleFleet and the settings of the
// control plane processes started on it.
type restartFleet struct {
	host      *testenv.Cluster
	dir       string
	cfg       *rest.Config
	hub       client.Client
	binary    string
	templates int
	quiet     time.Duration
	timeout   time.Duration
}

// startRestartFleet starts the host and fills it as the scale benchmark
// does.
func startRestartFleet(b *testing.B) *restartFleet {
	b.Helper()
	f := &restartFleet{
		templates: testkit.EnvInt(b, envScaleTemplates, 2000),
		quiet:     testkit.EnvDuration(b, envRestartQuiet, 15*time.Second),
		timeout:   testkit.EnvDuration(b, envScaleTimeout, 30*time.Minute),
		binary:    benchBinary(b),
	}
	nClusters := testkit.EnvInt(b, envScaleClusters, 200)
	fleet := testenv.Start(b, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly})
	f.host, f.dir = fleet.Clusters[0], fleet.Dir
	scheme, err := shared.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	f.cfg = f.host.RESTConfig()
	harness := rest.CopyConfig(f.cfg)
	harness.QPS, harness.Burst = 2000, 4000 // the harness, not the measured process
	installer, err := client.New(harness, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	if err := crd.Install(ctx, installer, time.Minute); err != nil {
		b.Fatal(err)
	}
	// A client made after the CRDs are served maps their kinds at once.
	if f.hub, err = client.New(harness, client.Options{Scheme: scheme}); err != nil {
		b.Fatal(err)
	}
	if err := createScaleFleet(ctx, f.hub, nClusters, f.templates); err != nil {
		b.Fatal(err)
	}
	b.Logf("harness: %d clusters, %d deployments", nClusters, f.templates)
	return f
}

// restartProcess is a control plane with its metrics endpoint on.
type restartProcess struct {
	*benchProcess
	metricsURL string
	elects     bool // runs with --leader-elect=true
}

// start runs a control plane named name (its log directory) with the scale
// benchmark's flags, its metrics served over plain HTTP on loopback.
func (f *restartFleet) start(b *testing.B, name string, args ...string) *restartProcess {
	b.Helper()
	dir := filepath.Join(f.dir, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		b.Fatal(err)
	}
	addr, err := freeAddr()
	if err != nil {
		b.Fatal(err)
	}
	all := append([]string{
		"--log-level=warn",
		// The Clusters have no credentials: every probe fails at once. A day
		// of failure threshold keeps the harness's Ready status for the run.
		"--cluster-failure-threshold=24h",
		"--metrics-bind-address=" + addr, "--metrics-secure=false",
	}, args...)
	return &restartProcess{
		benchProcess: startBenchControlplane(b, f.binary, f.host.KubeconfigPath, dir, all...),
		metricsURL:   "http://" + addr + "/metrics",
		elects:       slices.Contains(args, "--leader-elect=true"),
	}
}

// busy reports the items in the process's work queues and its running
// reconciles; a standby that does not lead yet (leader election on) counts
// as busy, since it has not started its work.
func (p *restartProcess) busy(ctx context.Context) (float64, error) {
	families, err := scrapeMetrics(ctx, nil, p.metricsURL)
	if err != nil {
		return 0, err
	}
	if p.elects && metricSum(families, "leader_election_master_status", nil) == 0 {
		return 1, nil
	}
	return metricSum(families, "workqueue_depth", nil) + metricSum(families, "controller_runtime_active_workers", nil), nil
}

// settled waits until every binding is scheduled, the process's queues are
// empty and the host has seen no counted write (Leases and Events aside)
// for f.quiet. It returns the moment the process last wrote or worked,
// which is when it settled.
func (f *restartFleet) settled(b *testing.B, p *restartProcess, since time.Time) time.Time {
	b.Helper()
	ctx := b.Context()
	last, scheduled := since, false
	prev, err := readHostWrites(ctx, f.cfg)
	if err != nil {
		b.Fatal(err)
	}
	var lastLog time.Time
	err = benchPoll(ctx, "settled", time.Second, f.timeout, func() (bool, string, error) {
		if err := p.alive(); err != nil {
			return false, "", err
		}
		now := time.Now()
		if !scheduled {
			bindings, n, err := countScheduled(ctx, f.hub)
			if err != nil {
				return false, "", err
			}
			if scheduled = n == f.templates; !scheduled {
				last = now
				return false, fmt.Sprintf("%d bindings, %d scheduled of %d", bindings, n, f.templates), nil
			}
		}
		depth, err := p.busy(ctx)
		if err != nil {
			// Metrics not served yet: the process is starting.
			last = now
			return false, err.Error(), nil //nolint:nilerr // retried until the timeout
		}
		w, err := readHostWrites(ctx, f.cfg)
		if err != nil {
			return false, "", err
		}
		delta := w.since(prev)
		prev = w
		if writes, _, _ := delta.split(); writes > 0 || depth > 0 {
			last = now
		}
		progress := fmt.Sprintf("queues %.0f, last second's writes: %v", depth, delta)
		if now.Sub(lastLog) > 10*time.Second {
			lastLog = now
			b.Logf("after %v: %s", now.Sub(since).Round(time.Second), progress)
		}
		return now.Sub(last) >= f.quiet, progress, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return last
}

// writesSince reads the host's writes since before and reports them by
// resource under prefix: prefix-writes (Leases and Events aside),
// prefix-lease-writes and prefix-event-writes.
func (f *restartFleet) writesSince(b *testing.B, before hostWrites, prefix string) hostWrites {
	b.Helper()
	now, err := readHostWrites(b.Context(), f.cfg)
	if err != nil {
		b.Fatal(err)
	}
	d := now.since(before)
	writes, leases, events := d.split()
	b.Logf("%s: host writes by resource: %v", prefix, d)
	b.ReportMetric(writes, prefix+"-writes")
	b.ReportMetric(leases, prefix+"-lease-writes")
	b.ReportMetric(events, prefix+"-event-writes")
	return d
}

// mark reads the host's write counters.
func (f *restartFleet) mark(b *testing.B) hostWrites {
	b.Helper()
	w, err := readHostWrites(b.Context(), f.cfg)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// stop ends a process with sig and waits for it.
func stopProcess(b *testing.B, p *restartProcess, sig syscall.Signal) {
	b.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		b.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		b.Fatalf("controlplane pid %d still runs 30 s after %v", p.cmd.Process.Pid, sig)
	}
}

// BenchmarkContinuousWarmRestart measures a warm restart of the control
// plane: over the scale benchmark's fleet a first process settles (every
// binding scheduled, its queues empty, no write to the host for
// FLOTILLA_BENCH_QUIET), is stopped with SIGTERM, and a second process
// starts over the settled state. Goal (issue 20): zero writes, settled in
// ≤ 30 s.
//
// Metrics: restart-settle-s (second process start → its last write or
// queued item), restart-writes (host write requests in that time, Leases
// and Events aside), restart-lease-writes, restart-event-writes,
// cold-settle-s and cold-writes (the first process, for scale).
func BenchmarkContinuousWarmRestart(b *testing.B) {
	f := startRestartFleet(b)
	before := f.mark(b)
	first := f.start(b, "first")
	cold := f.settled(b, first, first.started)
	b.Logf("first process settled after %v", cold.Sub(first.started).Round(time.Millisecond))
	f.writesSince(b, before, "cold")
	b.ReportMetric(cold.Sub(first.started).Seconds(), "cold-settle-s")

	stopProcess(b, first, syscall.SIGTERM)
	before = f.mark(b)
	second := f.start(b, "second")
	warm := f.settled(b, second, second.started)
	b.Logf("second process settled after %v", warm.Sub(second.started).Round(time.Millisecond))
	f.writesSince(b, before, "restart")
	b.ReportMetric(warm.Sub(second.started).Seconds(), "restart-settle-s")
	b.ReportMetric(0, "ns/op") // the figures above are the result
}

// BenchmarkContinuousLeaderChange measures a leader change: process A
// (leader election on, Kubernetes' default lease timing) settles over the
// scale benchmark's fleet, process B starts as a standby, then A is killed
// with SIGKILL, so it cannot release its lease. Goal (issue 20): B settles
// with zero duplicate writes (any write but Leases and Events repeats what A
// already wrote) in ≤ 30 s.
//
// Metrics: takeover-settle-s (kill → B's last write or queued item),
// takeover-writes (host writes in that time, Leases and Events aside),
// standby-writes (B's writes while A led).
func BenchmarkContinuousLeaderChange(b *testing.B) {
	f := startRestartFleet(b)
	a := f.start(b, "leader", "--leader-elect=true")
	f.settled(b, a, a.started)

	before := f.mark(b)
	standby := f.start(b, "standby", "--leader-elect=true")
	// The standby syncs nothing until it leads; give it time to start and
	// try the lease a few times.
	select {
	case <-b.Context().Done():
		b.Fatal(b.Context().Err())
	case <-time.After(f.quiet):
	}
	if err := standby.alive(); err != nil {
		b.Fatal(err)
	}
	f.writesSince(b, before, "standby")

	before = f.mark(b)
	killed := time.Now()
	stopProcess(b, a, syscall.SIGKILL)
	settled := f.settled(b, standby, killed)
	b.Logf("standby settled %v after the leader was killed", settled.Sub(killed).Round(time.Millisecond))
	f.writesSince(b, before, "takeover")
	b.ReportMetric(settled.Sub(killed).Seconds(), "takeover-settle-s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkContinuousClusterFlap measures a flapping Cluster: over the
// settled scale fleet the harness sets flapCluster's Ready condition False
// and True in turn every FLOTILLA_BENCH_FLAP_EVERY for FLOTILLA_BENCH_FLAP_FOR,
// then waits until the control plane settles. Goal (issue 20): only the
// bindings that could change are requeued — those placed on the Cluster and
// those whose affinity admits it; here every binding of bench-2, bench-4 and
// bench-5 (no affinity) and none of bench-1 (regions r0, r1) or bench-3
// (three named Clusters) unless placed on it.
//
// Metrics: requeues (flotilla_scheduler_cluster_requeues_total over the
// run), flips, bindings, could-change (bindings the rule admits),
// requeues-per-flip, flap-writes (host writes of the control plane, the
// harness's status writes subtracted), flap-settle-s (last flip → settled).
func BenchmarkContinuousClusterFlap(b *testing.B) {
	flapFor := testkit.EnvDuration(b, envFlapFor, time.Minute)
	every := testkit.EnvDuration(b, envFlapEvery, 3*time.Second)
	f := startRestartFleet(b)
	p := f.start(b, "flap")
	f.settled(b, p, p.started)
	ctx := b.Context()

	bindings, could, err := couldChange(ctx, f.hub, flapCluster)
	if err != nil {
		b.Fatal(err)
	}
	requeuesBefore, err := requeues(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	before := f.mark(b)
	flips := 0
	end := time.Now().Add(flapFor)
	for ready := false; time.Now().Before(end); ready = !ready {
		if err := setClusterReady(ctx, f.hub, flapCluster, ready); err != nil {
			b.Fatal(err)
		}
		flips++
		select {
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case <-time.After(every):
		}
	}
	if flips%2 == 1 { // leave it Ready, as it started
		if err := setClusterReady(ctx, f.hub, flapCluster, true); err != nil {
			b.Fatal(err)
		}
		flips++
	}
	lastFlip := time.Now()
	settled := f.settled(b, p, lastFlip)
	requeuesAfter, err := requeues(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	d := f.writesSince(b, before, "flap-raw")
	writes, _, _ := d.split()
	writes -= float64(flips) // the harness's own status writes
	n := requeuesAfter - requeuesBefore
	b.Logf("%d flips of %s: %.0f requeues (%.0f per flip) for %d bindings, %d of which could change; %.0f control plane writes",
		flips, flapCluster, n, n/float64(flips), bindings, could, writes)
	b.ReportMetric(n, "requeues")
	b.ReportMetric(float64(flips), "flips")
	b.ReportMetric(float64(bindings), "bindings")
	b.ReportMetric(float64(could), "could-change")
	b.ReportMetric(n/float64(flips), "requeues-per-flip")
	b.ReportMetric(writes, "flap-writes")
	b.ReportMetric(settled.Sub(lastFlip).Seconds(), "flap-settle-s")
	b.ReportMetric(0, "ns/op")
}

// requeues reads flotilla_scheduler_cluster_requeues_total of the process.
func requeues(ctx context.Context, p *restartProcess) (float64, error) {
	families, err := scrapeMetrics(ctx, nil, p.metricsURL)
	if err != nil {
		return 0, err
	}
	return metricSum(families, "flotilla_scheduler_cluster_requeues_total", nil), nil
}

// couldChange counts the bindings and those a change of the named Cluster
// could move under the scale benchmark's policies: placed on it, or in a
// namespace whose policy has no cluster affinity (bench-2, bench-4,
// bench-5).
func couldChange(ctx context.Context, hub client.Client, cluster string) (bindings, could int, err error) {
	open := map[string]bool{"bench-2": true, "bench-4": true, "bench-5": true}
	var list workv1.ResourceBindingList
	if err := hub.List(ctx, &list); err != nil {
		return 0, 0, fmt.Errorf("list bindings: %w", err)
	}
	for i := range list.Items {
		rb := &list.Items[i]
		placed := false
		for _, c := range rb.Spec.Clusters {
			placed = placed || c.Name == cluster
		}
		if placed || open[rb.Namespace] {
			could++
		}
	}
	return len(list.Items), could, nil
}

// setClusterReady writes the Cluster's Ready condition as a member's status
// would.
func setClusterReady(ctx context.Context, hub client.Client, name string, ready bool) error {
	var cl clusterv1.Cluster
	if err := hub.Get(ctx, client.ObjectKey{Name: name}, &cl); err != nil {
		return fmt.Errorf("get cluster %s: %w", name, err)
	}
	c := metav1.Condition{Type: api.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "set by the benchmark"}
	if !ready {
		c.Status, c.Reason = metav1.ConditionFalse, "ClusterNotReady"
	}
	apimeta.SetStatusCondition(&cl.Status.Conditions, c)
	if err := hub.Status().Update(ctx, &cl); err != nil {
		return fmt.Errorf("write status of cluster %s: %w", name, err)
	}
	return nil
}
