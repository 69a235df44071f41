//go:build linux

package e2e_test

// What BenchmarkContinuousScale measures beside the wall time: the host
// apiserver's requests by verb and resource (its own
// apiserver_request_total), and the CPU seconds of the host's apiserver, its
// etcd and the control plane process, so that a run says where the time
// went (issue 20).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// requestKey is one series of apiserver_request_total, without the code
// and scope.
type requestKey struct {
	verb, resource, subresource string
}

func (k requestKey) String() string {
	if k.subresource == "" {
		return k.verb + " " + k.resource
	}
	return k.verb + " " + k.resource + "/" + k.subresource
}

// hostRequests reads the host apiserver's request counters, summed over
// response codes and scopes.
func hostRequests(ctx context.Context, cfg *rest.Config) (map[requestKey]float64, error) {
	families, err := scrapeMetrics(ctx, cfg, cfg.Host+"/metrics")
	if err != nil {
		return nil, fmt.Errorf("read host /metrics: %w", err)
	}
	family, ok := families["apiserver_request_total"]
	if !ok {
		return nil, fmt.Errorf("host /metrics has no apiserver_request_total")
	}
	out := map[requestKey]float64{}
	for _, m := range family.GetMetric() {
		l := labels(m)
		out[requestKey{verb: l["verb"], resource: l["resource"], subresource: l["subresource"]}] += m.GetCounter().GetValue()
	}
	return out, nil
}

// requestDelta is the requests made between two reads, writes first, then
// by count.
type requestDelta struct {
	key   requestKey
	count float64
}

func requestsBetween(before, after map[requestKey]float64) []requestDelta {
	var out []requestDelta
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out = append(out, requestDelta{key: k, count: d})
		}
	}
	slices.SortFunc(out, func(a, b requestDelta) int {
		wa, wb := writeVerbs[a.key.verb], writeVerbs[b.key.verb]
		switch {
		case wa != wb && wa:
			return -1
		case wa != wb:
			return 1
		case a.count != b.count:
			if a.count > b.count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.key.String(), b.key.String())
	})
	return out
}

// writesIn sums the write requests of a delta.
func writesIn(delta []requestDelta) float64 {
	var n float64
	for _, d := range delta {
		if writeVerbs[d.key.verb] {
			n += d.count
		}
	}
	return n
}

// requestTable formats a delta, one series a line, with the count per
// binding beside it; WATCH requests are left out (they are long-lived).
func requestTable(delta []requestDelta, bindings int) string {
	var b strings.Builder
	for _, d := range delta {
		if d.key.verb == "WATCH" {
			continue
		}
		fmt.Fprintf(&b, "\n  %-48s %8.0f  %6.2f per binding", d.key, d.count, d.count/float64(bindings))
	}
	return b.String()
}

// cpuClock is the USER_HZ of /proc/PID/stat on Linux.
const cpuClock = 100

// processCPU is the user+system CPU time a process has used, from
// /proc/PID/stat.
func processCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu of pid %d: %w", pid, err)
	}
	// The command name is in parentheses and may hold spaces: fields
	// are counted after its closing one. utime and stime are fields 14
	// and 15 of the line, the 12th and 13th after the name.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("read cpu of pid %d: short stat line", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read cpu of pid %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / cpuClock, nil
}

// cpuMeter reads the CPU time of the host's processes and the control
// plane by name.
type cpuMeter map[string]int

func newCPUMeter(fleet *testenv.Fleet) cpuMeter {
	m := cpuMeter{}
	for _, p := range fleet.Processes() {
		if p.Name == "kube-apiserver" || p.Name == "etcd" {
			m[p.Name] = p.PID
		}
	}
	return m
}

// read returns each process's CPU time; a process that cannot be read is
// left out.
func (m cpuMeter) read() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range m {
		if d, err := processCPU(pid); err == nil {
			out[name] = d
		}
	}
	return out
}

// cpuBetween formats the CPU seconds each process used between two reads.
func cpuBetween(before, after map[string]time.Duration) string {
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f s", n, (after[n]-before[n]).Seconds()))
	}
	return strings.Join(parts, ", ")
}

// benchFreeAddr returns a free localhost address for the control plane's
// pprof endpoint.
func benchFreeAddr(b *testing.B) string {
	b.Helper()
	addr, err := freeAddr()
	if err != nil {
		b.Fatalf("find a free port: %v", err)
	}
	return addr
}

// benchCPUProfile writes a CPU profile of the control plane's next d to
// path, read from its pprof endpoint at addr; a failure is logged, since
// the profile is an aid and not the benchmark's result.
func benchCPUProfile(ctx context.Context, b *testing.B, addr, path string, d time.Duration) {
	err := func() error {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds()))
		var resp *http.Response
		// The endpoint comes up with the process.
		for range 300 {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if resp == nil {
			return fmt.Errorf("pprof endpoint %s did not answer", addr)
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("pprof endpoint %s: %s", addr, resp.Status)
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			_ = f.Close()
			return err
		}
		return f.Close()
	}()
	if err != nil {
		b.Logf("cpu profile: %v", err)
		return
	}
	b.Logf("cpu profile of the first %v written to %s", d, path)
}
