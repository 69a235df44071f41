package kind

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLogger: kind's user-facing lines reach logf once each, trimmed and
// naming the cluster; its debug levels do not.
func TestLogger(t *testing.T) {
	var got []string
	l := logger{cluster: "member1", logf: func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) }}
	l.V(0).Info(" ✓ Ensuring node image (kindest/node:v1.37.0) 🖼\n")
	l.V(0).Infof("Deleted nodes: %q", []string{"member1-control-plane"})
	l.V(1).Info("debug detail")
	l.V(0).Info("\n")
	l.Warnf("port %d in use", 6443)
	l.Error("failed")
	want := []string{
		"kind: member1: ✓ Ensuring node image (kindest/node:v1.37.0) 🖼",
		`kind: member1: Deleted nodes: ["member1-control-plane"]`,
		"kind: member1: warning: port 6443 in use",
		"kind: member1: error: failed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("logged lines (-want +got):\n%s", diff)
	}
	if l.V(1).Enabled() || !l.V(0).Enabled() {
		t.Fatal("want level 0 enabled and level 1 not")
	}
	logger{cluster: "member1"}.Warn("no logf: no panic")
}
