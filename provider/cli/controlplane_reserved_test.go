package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestControlplaneReservedNamespacesFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "host.kubeconfig", "--reserved-namespaces", "kube-*,istio*x"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if want := `--reserved-namespaces: reserved namespace "istio*x": want a namespace name, or a prefix followed by a single trailing *`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
