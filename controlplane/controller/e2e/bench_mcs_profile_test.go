//go:build linux

package e2e_test

// What BenchmarkMCSSync's full sync spends its time on (issue 33): with
// FLOTILLA_BENCH_MCS_PROFILE=<dir> the sync is CPU-profiled and its
// goroutines sampled, and it always logs the host apiserver's requests by
// verb and resource and the mcs controller's queue over the sync.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const envMCSProfile = "FLOTILLA_BENCH_MCS_PROFILE" // a directory for cpu.prof and goroutines-<s>.txt of the sync

// syncProbe records a phase of the benchmark: host requests of every verb,
// the mcs controller's queue and, when asked, a CPU profile and goroutine
// samples.
type syncProbe struct {
	b        *testing.B
	host     hostWrites // here: every verb, by resource:VERB[:code]
	queue    map[string]float64
	dir      string
	stop     chan struct{}
	sampled  chan struct{}
	profFile *os.File
}

func startSyncProbe(b *testing.B, readHost func() hostWrites) *syncProbe {
	b.Helper()
	p := &syncProbe{b: b, host: readHost(), queue: mcsQueue(b), dir: os.Getenv(envMCSProfile)}
	if p.dir == "" {
		return p
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(p.dir, "cpu.prof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	p.profFile, p.stop, p.sampled = f, make(chan struct{}), make(chan struct{})
	go func() {
		// Where the workers wait (a rate limiter, a requeue delay, a
		// member read) shows in goroutine samples, not in CPU.
		defer close(p.sampled)
		start := time.Now()
		t := time.NewTicker(3 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				name := filepath.Join(p.dir, fmt.Sprintf("goroutines-%03.0f.txt", time.Since(start).Seconds()))
				if g, err := os.Create(name); err == nil {
					_ = pprof.Lookup("goroutine").WriteTo(g, 1)
					_ = g.Close()
				}
			}
		}
	}()
	return p
}

// end stops the profile and logs the phase's host requests and queue.
func (p *syncProbe) end(readHost func() hostWrites, phase string) {
	p.b.Helper()
	if p.profFile != nil {
		close(p.stop)
		<-p.sampled
		pprof.StopCPUProfile()
		_ = p.profFile.Close()
	}
	d := readHost().since(p.host)
	byVerb := map[string]float64{}
	for k, v := range d {
		parts := strings.Split(k, ":")
		byVerb[parts[1]] += v
	}
	q := mcsQueue(p.b)
	var qs []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		qs = append(qs, fmt.Sprintf("%s=%.3g", k, q[k]-p.queue[k]))
	}
	p.b.Logf("%s: host requests by verb %v; by resource %s; mcs queue %s", phase, byVerb, d, strings.Join(qs, " "))
}

// mcsQueue reads the mcs controller's workqueue and reconcile counters
// from controller-runtime's registry (the control plane runs in this
// process): adds, retries, reconciles by result, and the seconds summed in
// the queue and in Reconcile.
func mcsQueue(b *testing.B) map[string]float64 {
	b.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			l := labels(m)
			if l["name"] != "mcs" && l["controller"] != "mcs" {
				continue
			}
			switch f.GetName() {
			case "workqueue_adds_total", "workqueue_retries_total":
				out[f.GetName()] += m.GetCounter().GetValue()
			case "controller_runtime_reconcile_total":
				out["reconcile_"+l["result"]] += m.GetCounter().GetValue()
			case "workqueue_queue_duration_seconds", "controller_runtime_reconcile_time_seconds":
				out[f.GetName()+"_sum"] += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}
