package member

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// BenchmarkMemberStatusScale measures what the cluster status loop costs a
// member with many nodes and pods, and flotilla, per minute: the member's
// kube-apiserver CPU (utime + stime from /proc) and RSS, and this process's
// CPU, allocations and retained heap, while CollectStatus runs every probe
// interval with the controller's default probe timeout. Three modes, taken
// in turns (round 1: idle, list, watch; round 2: …) so that the machine's
// load hits them alike:
//
//   - idle: no status loop, the member's own churn (kwok renewing node
//     Leases);
//   - list: a cache without Watch, which is the code path of main before
//     this change: discovery and paged lists of nodes and pods every probe;
//   - watch: a cache with Watch (the control plane's): informers started
//     before the window, discovery kept.
//
// Sizes from the environment, small by default:
//
//	FLOTILLA_BENCH_STATUS_NODES     kwok nodes (default 20)
//	FLOTILLA_BENCH_STATUS_PODS      pods, bound round robin (default 200)
//	FLOTILLA_BENCH_STATUS_WINDOW    measured window per mode and round (default 20s)
//	FLOTILLA_BENCH_STATUS_ROUNDS    rounds (default 1)
//	FLOTILLA_BENCH_STATUS_INTERVAL  probe interval (default 10s, the control plane's)
//	FLOTILLA_BENCH_STATUS_KWOK=0    an apiserver-only member whose nodes the
//	                                benchmark makes Ready once and whose bound
//	                                pods stay Pending: no kwok Lease churn, and
//	                                nodes that cannot turn NotReady on a
//	                                loaded machine (default: a Full member)
//
// It reports, per mode, the median over the rounds as <mode>-<figure>
// metrics, and logs every round.
func BenchmarkMemberStatusScale(b *testing.B) {
	nodes := testkit.EnvInt(b, "FLOTILLA_BENCH_STATUS_NODES", 20)
	pods := testkit.EnvInt(b, "FLOTILLA_BENCH_STATUS_PODS", 200)
	rounds := testkit.EnvInt(b, "FLOTILLA_BENCH_STATUS_ROUNDS", 1)
	window := testkit.EnvDuration(b, "FLOTILLA_BENCH_STATUS_WINDOW", 20*time.Second)
	interval := testkit.EnvDuration(b, "FLOTILLA_BENCH_STATUS_INTERVAL", 10*time.Second)

	kwok := os.Getenv("FLOTILLA_BENCH_STATUS_KWOK") != "0"

	setup := time.Now()
	opts := testenv.Options{
		Mode: testenv.Full, NamePrefix: "status",
		Node:    testenv.NodeSpec{Count: nodes, CPU: resource.MustParse("32"), Memory: resource.MustParse("256Gi"), Pods: resource.MustParse("110")},
		Timeout: 30 * time.Minute,
	}
	if !kwok {
		opts.Mode, opts.Node = testenv.APIServerOnly, testenv.NodeSpec{}
	}
	f := testenv.Start(b, opts)
	m := f.Clusters[0]
	apiserver := 0
	for _, p := range f.Processes() {
		if p.Cluster == m.Name && p.Name == "kube-apiserver" {
			apiserver = p.PID
		}
	}
	if apiserver == 0 {
		b.Fatal("no kube-apiserver process in the fleet")
	}
	cfg := m.RESTConfig()
	cfg.QPS, cfg.Burst = 500, 1000
	kube := kubernetes.NewForConfigOrDie(cfg)
	if !kwok {
		createStaticNodes(b, kube, m.Name, nodes)
	}
	createBenchPods(b, kube, m.Name, nodes, pods, kwok)
	b.Logf("member %s (kwok %t): %d nodes, %d pods, set up in %s; load average %s", m.Name, kwok, nodes, pods, time.Since(setup).Round(time.Second), loadavg())

	results := map[string][]statusWindow{}
	b.ResetTimer()
	for range b.N {
		for r := 1; r <= rounds; r++ {
			for _, mode := range []string{"idle", "list", "watch"} {
				w := measureStatus(b, m, apiserver, mode, window, interval)
				results[mode] = append(results[mode], w)
				// Also on stderr: go test cuts a benchmark's long log.
				fmt.Fprintf(os.Stderr, "round %d %-5s %s\n", r, mode, w)
				b.Logf("round %d %-5s %s", r, mode, w)
			}
		}
	}
	b.StopTimer()
	for _, mode := range []string{"idle", "list", "watch"} {
		med := func(get func(statusWindow) float64) float64 {
			var v []float64
			for _, w := range results[mode] {
				v = append(v, get(w))
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		b.ReportMetric(med(func(w statusWindow) float64 { return w.apiserverCPU }), mode+"-apiserver-cpu-s/min")
		b.ReportMetric(med(func(w statusWindow) float64 { return w.apiserverRSS }), mode+"-apiserver-rss-MB")
		b.ReportMetric(med(func(w statusWindow) float64 { return w.selfCPU }), mode+"-flotilla-cpu-s/min")
		b.ReportMetric(med(func(w statusWindow) float64 { return w.selfAlloc }), mode+"-flotilla-alloc-MB/min")
		b.ReportMetric(med(func(w statusWindow) float64 { return w.heap }), mode+"-flotilla-heap-MB")
		if mode != "idle" {
			b.ReportMetric(med(func(w statusWindow) float64 { return w.p50 }), mode+"-collect-p50-ms")
			b.ReportMetric(med(func(w statusWindow) float64 { return float64(w.failed) }), mode+"-collect-failed")
		}
	}
}

// statusWindow is what one measured window cost, scaled to a minute.
type statusWindow struct {
	apiserverCPU, apiserverRSS, apiserverHWM float64 // s/min, MB, MB
	selfCPU, selfAlloc, heap                 float64 // s/min, MB/min, MB retained by the mode
	collects, failed                         int
	nodes                                    int32   // Ready, in the last summary
	pods                                     int64   // non-terminal and counted, in the last summary
	p50, first                               float64 // ms
	load                                     string
}

func (w statusWindow) String() string {
	return fmt.Sprintf("summary %d ready nodes, %d pods; apiserver %.2f cpu-s/min rss %.0f MB (hwm %.0f); flotilla %.2f cpu-s/min, %.1f MB/min allocated, %.1f MB heap kept; %d collects (%d failed) p50 %.0f ms, first %.0f ms; load %s",
		w.nodes, w.pods, w.apiserverCPU, w.apiserverRSS, w.apiserverHWM, w.selfCPU, w.selfAlloc, w.heap, w.collects, w.failed, w.p50, w.first, w.load)
}

// measureStatus runs one mode for window and returns its costs.
func measureStatus(b *testing.B, m *testenv.Cluster, apiserver int, mode string, window, interval time.Duration) statusWindow {
	b.Helper()
	heapBefore := liveHeap()
	var w statusWindow
	var c *Client
	var cache *Cache
	collect := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(b.Context(), 5*time.Second) // the controller's default probe timeout
		defer cancel()
		start := time.Now()
		status, err := CollectStatus(ctx, c)
		if err == nil {
			w.nodes = status.NodeSummary.ReadyNum
			w.pods = status.ResourceSummary.Allocated.Pods().Value() + status.ResourceSummary.Allocating.Pods().Value()
		}
		return time.Since(start), err
	}
	if mode != "idle" {
		cache = NewCache(CacheOptions{Watch: mode == "watch"})
		var err error
		if c, err = cache.Get(b.Context(), m.Name, tokenConn(m)); err != nil {
			b.Fatal(err)
		}
		// The first collection starts the informers (watch) and is not in
		// the window: it is what a member costs once, on connect.
		start := time.Now()
		err = wait.PollUntilContextTimeout(b.Context(), time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
			_, err := collect()
			return err == nil, nil
		})
		if err != nil {
			b.Fatalf("%s: status never collected: %v", mode, err)
		}
		w.first = float64(time.Since(start).Milliseconds())
	}
	apiBefore, selfBefore := procCPU(b, apiserver), selfCPU(b)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocBefore := ms.TotalAlloc
	start := time.Now()
	var took []float64
	for time.Since(start) < window {
		if c != nil {
			d, err := collect()
			took = append(took, float64(d.Milliseconds()))
			if err != nil {
				w.failed++
			}
		}
		next := interval - time.Since(start)%interval
		if left := window - time.Since(start); left < next {
			next = left
		}
		time.Sleep(next)
	}
	elapsed := time.Since(start).Minutes()
	runtime.ReadMemStats(&ms)
	w.apiserverCPU = (procCPU(b, apiserver) - apiBefore) / elapsed
	w.selfCPU = (selfCPU(b) - selfBefore) / elapsed
	w.selfAlloc = float64(ms.TotalAlloc-allocBefore) / (1 << 20) / elapsed
	w.heap = liveHeap() - heapBefore
	w.apiserverRSS, w.apiserverHWM = procMem(b, apiserver, "VmRSS"), procMem(b, apiserver, "VmHWM")
	w.collects = len(took)
	if len(took) > 0 {
		slices.Sort(took)
		w.p50 = took[len(took)/2]
	}
	w.load = loadavg()
	if cache != nil {
		cache.Invalidate(m.Name)
		runtime.KeepAlive(c)
	}
	return w
}

// createStaticNodes makes Ready nodes named as testenv names kwok's, in a
// member without kwok, and the default ServiceAccount pods need.
func createStaticNodes(b *testing.B, kube kubernetes.Interface, cluster string, nodes int) {
	b.Helper()
	if _, err := kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Create(b.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	err := benchParallel(nodes, func(i int) error {
		n := makeNode(fmt.Sprintf("%s-node-%d", cluster, i+1)).Ready().Allocatable("32", "256Gi", "110").Obj()
		created, err := kube.CoreV1().Nodes().Create(b.Context(), n, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		created.Status = n.Status
		if _, err := kube.CoreV1().Nodes().UpdateStatus(b.Context(), created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("set status of node %s: %w", n.Name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchParallel runs do(0) … do(n-1) on 16 goroutines and returns the first
// error.
func benchParallel(n int, do func(i int) error) error {
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for worker := range workers {
		wg.Go(func() {
			for i := worker; i < n; i += workers {
				if err := do(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// createBenchPods creates pods bound round robin to the member's nodes (so
// no scheduler work is measured) and, with kwok, waits until it runs them
// all.
func createBenchPods(b *testing.B, kube kubernetes.Interface, cluster string, nodes, pods int, kwok bool) {
	b.Helper()
	err := benchParallel(pods, func(i int) error {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", i)},
			Spec: corev1.PodSpec{
				NodeName:                     fmt.Sprintf("%s-node-%d", cluster, i%nodes+1),
				AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{
					Name: "app", Image: "registry.example.com/app:1",
					Resources: corev1.ResourceRequirements{Requests: resourceList("100m", "128Mi", "")},
				}},
			},
		}
		if _, err := kube.CoreV1().Pods(metav1.NamespaceDefault).Create(b.Context(), p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if !kwok {
		return // pods stay Pending, bound: they count as allocated all the same
	}
	err = wait.PollUntilContextTimeout(b.Context(), 2*time.Second, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := kube.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Running", Limit: 1})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		b.Fatalf("pods never all Running: %v", err)
	}
}

// liveHeap is the heap in use after a collection, in MB.
func liveHeap() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// procCPU is the user + system CPU seconds of a process, from
// /proc/<pid>/stat (in clock ticks of 1/100 s, Linux's USER_HZ).
func procCPU(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parse /proc/%d/stat: %v %v", pid, err1, err2)
	}
	return (utime + stime) / 100
}

// selfCPU is this process's user + system CPU seconds.
func selfCPU(b *testing.B) float64 {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// procMem is a /proc/<pid>/status memory field in MB.
func procMem(b *testing.B, pid int, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatalf("parse %s of /proc/%d/status: %v", field, pid, err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}
