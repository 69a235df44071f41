package examples

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// startWithin bounds how long a started program may take to listen or
// report ready; the machine is shared and may be compiling, so it is
// generous.
const startWithin = 2 * time.Minute

// logTail is how much of a program's log a failing test prints.
const logTail = 8 << 10

// process is a program a test started. The test's cleanup kills it, by
// PID, and prints the end of its log when the test failed.
type process struct {
	name    string
	logPath string
	exited  chan struct{}
	err     error // how it exited; set before exited is closed
}

// startProcess starts bin with args, with env added to this process'
// environment, its output in dir/<name>.log.
func startProcess(t *testing.T, dir, name, bin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{name: name, logPath: filepath.Join(dir, name+".log"), exited: make(chan struct{})}
	log, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		t.Fatalf("start %s (%s): %v", name, bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		_ = log.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s %v: end of its log:\n%s", name, args, p.tail())
		}
	})
	return p
}

// tail is the end of the process' log.
func (p *process) tail() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	if len(data) > logTail {
		data = data[len(data)-logTail:]
	}
	return string(data)
}

// waitUntil polls ok until it holds, and fails the test when the process
// exits first or startWithin passes; what names the state awaited.
func (p *process) waitUntil(t *testing.T, what string, ok func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), startWithin)
	defer cancel()
	for {
		err := ok(ctx)
		if err == nil {
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("%s exited (%v) before %s:\n%s", p.name, p.err, what, p.tail())
		case <-ctx.Done():
			t.Fatalf("%s: not %s within %v: %v\n%s", p.name, what, startWithin, err, p.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitListening waits until something accepts connections on addr.
func (p *process) waitListening(t *testing.T, addr string) {
	t.Helper()
	p.waitUntil(t, "listening on "+addr, func(ctx context.Context) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.Close()
		}
		return err
	})
}

// waitReady waits until GET url answers 200, as a readiness probe would.
func (p *process) waitReady(t *testing.T, url string) {
	t.Helper()
	p.waitUntil(t, "ready at "+url, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	})
}
