package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestControlplaneInPodNeedsNoKubeconfig: in a pod (KUBERNETES_SERVICE_HOST
// and _PORT set, as the kubelet does) an empty --kubeconfig is not a usage
// error: the host is reached with the pod's ServiceAccount, through
// client-go's in-cluster configuration, which here finds no token and says so.
func TestControlplaneInPodNeedsNoKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "1")
	var stderr bytes.Buffer
	code := Controlplane([]string{"--health-probe-bind-address=0", "--metrics-bind-address=0"}, &stderr)
	if code != 1 || strings.Contains(stderr.String(), "Usage:") || !strings.Contains(stderr.String(), "load host kubeconfig") {
		t.Errorf("exit code %d, stderr %q: want 1 and the host configuration's error, not the usage", code, stderr.String())
	}
}
