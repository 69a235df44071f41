package testenv

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcessInfo records one process of a fleet, enough for another OS process
// to find and stop it later (see StopDetached).
type ProcessInfo struct {
	// Cluster is the member the process belongs to; empty for the shared etcd.
	Cluster string `json:"cluster,omitempty"`
	// Name is the binary's name, e.g. kube-apiserver.
	Name string `json:"name"`
	// PID is the process ID of the current run.
	PID int `json:"pid"`
	// Cmdline is the binary path followed by its arguments.
	Cmdline []string `json:"cmdline"`
	// Log is the file receiving the process's output.
	Log string `json:"log"`
}

// Processes lists the fleet's running processes, etcd last.
func (f *Fleet) Processes() []ProcessInfo {
	var out []ProcessInfo
	for _, p := range f.allProcesses() {
		if gone, _ := p.exited(); gone || p.pid() == 0 {
			continue
		}
		out = append(out, ProcessInfo{
			Cluster: p.cluster,
			Name:    p.name,
			PID:     p.pid(),
			Cmdline: append([]string{p.path}, p.args...),
			Log:     p.logPath,
		})
	}
	return out
}

// Running reports whether the PID still runs the recorded command line. A
// PID reused by an unrelated process (after a reboot, say) does not match.
func (pi ProcessInfo) Running() bool {
	got, err := cmdline(pi.PID)
	return err == nil && slices.Equal(got, pi.Cmdline)
}

// StopDetached stops processes that an earlier StartFleet with Detach left
// running, possibly from another OS process: SIGTERM, then SIGKILL after
// grace, to each recorded PID that still runs its recorded command line, and
// never to any other. Cluster processes go first, etcd last.
func StopDetached(procs []ProcessInfo, grace time.Duration) error {
	var clients, etcd []ProcessInfo
	for _, p := range procs {
		if p.Cluster == "" {
			etcd = append(etcd, p)
		} else {
			clients = append(clients, p)
		}
	}
	return errors.Join(stopDetached(clients, grace), stopDetached(etcd, grace))
}

func stopDetached(procs []ProcessInfo, grace time.Duration) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.stop(grace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (pi ProcessInfo) stop(grace time.Duration) error {
	// On Linux the handle is a pidfd: once Running has matched after
	// FindProcess, signals reach that process even if the PID is reused later.
	proc, err := os.FindProcess(pi.PID)
	if err != nil || !pi.Running() {
		return nil
	}
	defer func() { _ = proc.Release() }()
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Kill} {
		if err := proc.Signal(sig); err != nil {
			if errors.Is(err, os.ErrProcessDone) {
				return nil
			}
			return fmt.Errorf("signal %s (pid %d): %w", pi.label(), pi.PID, err)
		}
		for deadline := time.Now().Add(grace); time.Now().Before(deadline); {
			if !pi.Running() {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return fmt.Errorf("stop %s (pid %d): still running after SIGKILL", pi.label(), pi.PID)
}

func (pi ProcessInfo) label() string {
	return strings.TrimPrefix(pi.Cluster+"/"+pi.Name, "/")
}
