package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestControlplaneTemplateKindsFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "host.kubeconfig", "--template-kinds", "apps/v1/Deployment,Widget"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if want := `--template-kinds: template kind "Widget": want group/version/Kind`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}

// TestControlplaneSecretKindNeedsPropagateSecrets: Secrets read in
// flotilla-system only cannot be a template kind.
func TestControlplaneSecretKindNeedsPropagateSecrets(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "host.kubeconfig", "--propagate-secrets=false", "--template-kinds", "apps/v1/Deployment,v1/Secret"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if want := "--template-kinds: v1/Secret needs --propagate-secrets"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
