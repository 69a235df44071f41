package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestControlplaneMemberWorkersFlag: a per-member limit that is not below
// the worker count would let one stalled member take every worker, so the
// process refuses it at start.
func TestControlplaneMemberWorkersFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "host.kubeconfig", "--work-workers", "4", "--member-workers", "4"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if want := "--member-workers: member workers (4) must be below work workers (4)"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
