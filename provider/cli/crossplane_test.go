package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestCrossplaneUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := Crossplane([]string{"extra"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "crossplane [--kubeconfig MGMT]") || !strings.Contains(stderr.String(), "-install-crds") {
		t.Errorf("usage not printed: %q", stderr.String())
	}
}

func TestCrossplaneBadKubeconfig(t *testing.T) {
	var stderr bytes.Buffer
	missing := filepath.Join(t.TempDir(), "missing.kubeconfig")
	if code := Crossplane([]string{"--kubeconfig", missing, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, &stderr); code != 1 {
		t.Fatalf("exit code = %d, want 1: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "load management kubeconfig "+missing) {
		t.Errorf("error does not name the kubeconfig: %q", stderr.String())
	}
}
