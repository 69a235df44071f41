package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets between SIGTERM and SIGKILL.
const stopGrace = 5 * time.Second

// process is one child this package started. Its output goes to logPath,
// opened for append so a restarted process keeps its earlier history.
type process struct {
	cluster string // "" for the shared etcd
	name    string // binary name, e.g. kube-apiserver
	path    string
	args    []string
	logPath string
	detach  bool

	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{} // closed once the current run has exited
	err       error         // the current run's exit status, valid after done
	logOffset int64         // where the current run's output starts in logPath
	stopped   bool          // the current run was ended by stop, not by itself
}

// label names the process in errors and progress lines.
func (p *process) label() string {
	if p.cluster == "" {
		return p.name
	}
	return p.cluster + "/" + p.name
}

// start launches the process. It fails if the process is still running.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !isClosed(p.done) {
		return fmt.Errorf("start %s: already running as pid %d", p.label(), p.cmd.Process.Pid)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.label(), err)
	}
	defer logFile.Close() // the child holds its own descriptor
	offset, _ := logFile.Seek(0, io.SeekEnd)
	if offset > 0 {
		fmt.Fprintln(logFile)
	}
	fmt.Fprintf(logFile, "==== testenv: %s %s %s\n", time.Now().Format(time.RFC3339), p.path, strings.Join(p.args, " "))

	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr(p.detach)
	if err := startCmd(cmd, !p.detach); err != nil {
		return fmt.Errorf("start %s: %w", p.label(), err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err, p.logOffset, p.stopped = cmd, done, nil, offset, false
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// pid returns the PID of the current run, or 0 if never started.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// exited reports whether the current run has ended, and how.
func (p *process) exited() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || !isClosed(p.done) {
		return false, nil
	}
	return true, p.err
}

// crashed reports whether the current run ended without stop being asked.
func (p *process) crashed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && isClosed(p.done) && !p.stopped
}

// stop sends SIGTERM to the process's own PID, then SIGKILL after grace, and
// waits until it has been reaped. It is a no-op for a process not running.
func (p *process) stop(grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	if cmd != nil && !isClosed(done) {
		p.stopped = true
	}
	p.mu.Unlock()
	if cmd == nil || isClosed(done) {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	<-done
}

// exitError describes an unexpected exit together with the log tail.
func (p *process) exitError(err error) error {
	return fmt.Errorf("%s exited: %v\n%s", p.label(), err, p.tail(30))
}

// tail renders the last n lines of the process log for an error message.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log at %s: %v)", p.logPath, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "--- last %d lines of %s ---\n", len(lines), p.logPath)
	for _, l := range lines {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// logMentions reports whether the current run's output contains s; it is
// used to tell a port clash from other failures.
func (p *process) logMentions(s string) bool {
	p.mu.Lock()
	offset := p.logOffset
	p.mu.Unlock()
	data, err := os.ReadFile(p.logPath)
	if err != nil || int64(len(data)) < offset {
		return false
	}
	return bytes.Contains(data[offset:], []byte(s))
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stopAll stops processes concurrently.
func stopAll(procs []*process, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() { p.stop(grace) })
	}
	wg.Wait()
}

// Pdeathsig fires when the OS thread that forked the child exits, not when the
// process does (golang/go#27505). Forking from one goroutine locked to a
// thread that never exits makes it mean "the test binary died".
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func startCmd(cmd *exec.Cmd, lockedThread bool) error {
	if !lockedThread {
		return cmd.Start()
	}
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread must outlive every child
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	req := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawner.reqs <- req
	return <-req.done
}

// Ports are picked below Linux's and macOS's ephemeral ranges (32768+ and
// 49152+), so the kernel never lends a fleet's port to an outgoing connection
// while an apiserver is stopped for a restart on it.
const (
	portMin  = 20000
	portSpan = 12000
)

// ports remembers what this process handed out, so a port that a stopped
// apiserver will come back on is not given away.
var ports struct {
	mu   sync.Mutex
	used map[int]bool
}

// freePort returns a loopback port that nothing listens on now. Another
// process can still take it before the server binds it; callers retry then.
func freePort() (int, error) {
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if ports.used == nil {
		ports.used = map[int]bool{}
	}
	for range 200 {
		port := portMin + rand.IntN(portSpan)
		if ports.used[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = l.Close()
		ports.used[port] = true
		return port, nil
	}
	return 0, errors.New("find a free loopback port: 200 candidates were all taken")
}
