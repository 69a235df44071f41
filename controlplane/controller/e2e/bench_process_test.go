//go:build linux

package e2e_test

// Helpers of the continuous-mode benchmarks (bench_scale_test.go,
// bench_failover_test.go). They run the control plane the way an operator
// does, as the `controlplane` subcommand of the built binary in a process of
// its own, so its peak RSS is its own and its flags are the ones measured.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// benchBinaryEnv names a prebuilt flotilla binary; scripts/bench.sh sets it
// so the benchmarks measure the binary it built. Unset, the benchmark builds
// the module's main package into a temporary directory.
const benchBinaryEnv = "FLOTILLA_BENCH_BINARY"

// benchBinary returns the path of the flotilla binary to run.
func benchBinary(b *testing.B) string {
	b.Helper()
	if path := os.Getenv(benchBinaryEnv); path != "" {
		return path
	}
	out := filepath.Join(b.TempDir(), "terraform-provider-flotilla")
	// The test runs in controlplane/controller/e2e; the main package is the module root.
	cmd := exec.CommandContext(b.Context(), "go", "build", "-o", out, "../../..")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build flotilla: %v\n%s", err, msg)
	}
	return out
}

// benchProcess is a running `controlplane` subcommand.
type benchProcess struct {
	cmd     *exec.Cmd
	started time.Time
	logPath string
	done    chan struct{}
	waitErr error
}

// startBenchControlplane starts `BINARY controlplane --kubeconfig KUBECONFIG
// ARGS...` with leader election, metrics and probes off, logging to a file in
// dir. The process is stopped (SIGTERM, then SIGKILL) in b.Cleanup, and dies
// with the benchmark through the parent-death signal.
func startBenchControlplane(b *testing.B, binary, kubeconfig, dir string, args ...string) *benchProcess {
	b.Helper()
	logPath := filepath.Join(dir, "controlplane.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatalf("create controlplane log: %v", err)
	}
	all := append([]string{
		"controlplane", "--kubeconfig", kubeconfig,
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
	}, args...)
	cmd := exec.Command(binary, all...) //nolint:gosec // the benchmark's own binary and flags
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &benchProcess{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		b.Fatalf("start controlplane: %v", err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	b.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	b.Logf("controlplane pid %d: %s (log %s)", cmd.Process.Pid, strings.Join(all, " "), logPath)
	return p
}

// alive returns an error naming the log when the process has exited.
func (p *benchProcess) alive() error {
	select {
	case <-p.done:
		return fmt.Errorf("controlplane exited (%v); log: %s", p.waitErr, p.logPath)
	default:
		return nil
	}
}

// memory returns the process's VmHWM (peak resident set) and VmRSS in bytes,
// from /proc/PID/status.
func (p *benchProcess) memory() (peak, current int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read controlplane memory: %w", err)
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		fields := strings.Fields(value) // "123456 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("read controlplane memory: unexpected %s line %q", key, s.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read controlplane memory: %s: %w", key, err)
		}
		if key == "VmHWM" {
			peak = kb * 1024
		} else {
			current = kb * 1024
		}
	}
	if err := s.Err(); err != nil {
		return 0, 0, fmt.Errorf("read controlplane memory: %w", err)
	}
	if peak == 0 {
		return 0, 0, errors.New("read controlplane memory: no VmHWM line")
	}
	return peak, current, nil
}

// benchParallel runs do(0) … do(n-1) on workers goroutines and returns the first
// error; the others are cancelled through ctx.
func benchParallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// benchPoll calls f every interval until it reports done, returns an error,
// or timeout passes.
func benchPoll(ctx context.Context, what string, interval, timeout time.Duration, f func() (bool, string, error)) error {
	end := time.Now().Add(timeout)
	last := ""
	for {
		ok, progress, err := f()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		last = progress
		if time.Now().After(end) {
			return fmt.Errorf("%s: not reached within %v: %s", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (%s)", what, ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

// benchHostAndMembers starts an apiserver-only host with flotilla's CRDs
// and nMembers apiserver-only members, and returns a host client with
// limits high enough that the harness never throttles itself (the measured
// process keeps its own).
func benchHostAndMembers(b *testing.B, nMembers int) (hostFleet *testenv.Fleet, members []*testenv.Cluster, hub client.Client) {
	b.Helper()
	hostFleet = testenv.Start(b, testenv.Options{Clusters: 1, NamePrefix: "host", Mode: testenv.APIServerOnly})
	memberFleet := testenv.Start(b, testenv.Options{Clusters: nMembers, Mode: testenv.APIServerOnly, Timeout: 5 * time.Minute})
	scheme, err := shared.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	hub, err = client.New(benchHarnessConfig(hostFleet.Clusters[0]), client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	if err := crd.Install(b.Context(), hub, time.Minute); err != nil {
		b.Fatal(err)
	}
	return hostFleet, memberFleet.Clusters, hub
}

// benchHarnessConfig is the host's REST config for the harness, whose own
// client-side limits must never be what a benchmark measures.
func benchHarnessConfig(host *testenv.Cluster) *rest.Config {
	cfg := host.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	return cfg
}
