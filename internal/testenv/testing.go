package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
)

// KeepEnv names the environment variable that, set to 1, keeps a test fleet's directory even after a
// passing test.
const KeepEnv = "FLOTILLA_TESTENV_KEEP"

// Start starts a fleet for a test and fails the test if it cannot. Teardown
// is registered with t.Cleanup: every process the fleet started is stopped,
// by PID, whether the test passed or not. The directory with the logs is
// removed after a passing test and kept, and named, after a failing one
// (always kept when opts.Dir is set, or when FLOTILLA_TESTENV_KEEP=1).
func Start(t testing.TB, opts Options) *Fleet {
	t.Helper()
	ownDir := opts.Dir == ""
	if ownDir {
		// Not t.TempDir: the logs are kept after a failing test, and named.
		dir, err := os.MkdirTemp("", "flotilla-testenv-") //nolint:usetesting // kept on failure
		if err != nil {
			t.Fatalf("testenv: %v", err)
		}
		opts.Dir = dir
	}
	dir := opts.Dir
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	f, err := StartFleet(t.Context(), opts)
	if err != nil {
		if ownDir && errors.Is(err, ErrBinariesMissing) {
			_ = os.RemoveAll(dir) // nothing ran, so there are no logs to keep
		}
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		var crashed []*process
		for _, p := range f.allProcesses() {
			if p.crashed() {
				crashed = append(crashed, p)
			}
		}
		f.stopProcesses()
		if t.Failed() {
			for _, p := range crashed {
				_, err := p.exited()
				t.Logf("testenv: %v", p.exitError(err))
			}
			t.Logf("testenv: fleet directory kept: %s", dir)
			for _, p := range f.allProcesses() {
				t.Logf("testenv:   %s log: %s", p.label(), p.logPath)
			}
		}
		if !ownDir || t.Failed() || os.Getenv(KeepEnv) == "1" {
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("testenv: remove %s: %v", dir, err)
		}
	})
	return f
}

// Clientset returns a client-go clientset of c, which reaches the member
// without going through flotilla, and fails the test if it cannot be built.
func (c *Cluster) Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestKubeconfig writes the fleet's kubeconfig, a context per cluster named
// after it, into the test's temporary directory and returns its path.
func (f *Fleet) TestKubeconfig(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := f.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	return path
}
