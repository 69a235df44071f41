//go:build unix

package testenv

import (
	"syscall"
	"testing"
)

// FreezeAPIServer suspends the cluster's kube-apiserver with SIGSTOP: the
// kernel still accepts connections on its port, but nothing answers, as
// with a hung host or a network that drops replies. Unlike StopAPIServer,
// clients wait until their own timeouts. ThawAPIServer resumes it, and so
// does the end of the test.
func (c *Cluster) FreezeAPIServer(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	pid := c.apiserver.pid()
	c.mu.Unlock()
	if pid == 0 {
		t.Fatalf("testenv: freeze cluster %s: its apiserver is not running", c.Name)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("testenv: freeze cluster %s: %v", c.Name, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
}

// ThawAPIServer resumes an apiserver FreezeAPIServer suspended. It sends
// SIGCONT to the current apiserver process, which is harmless when it runs.
func (c *Cluster) ThawAPIServer(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	pid := c.apiserver.pid()
	c.mu.Unlock()
	if pid == 0 {
		return
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatalf("testenv: thaw cluster %s: %v", c.Name, err)
	}
}
