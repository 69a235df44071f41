package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
)

func TestControlplaneRequiresKubeconfig(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane(nil, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "--kubeconfig HOST") {
		t.Errorf("usage not printed: %q", stderr.String())
	}
}

// TestControlplaneRefusesUnknownAPIGroups: an --api-groups other than
// flotilla or karmada exits 2 naming the flag and the value, before
// anything connects.
func TestControlplaneRefusesUnknownAPIGroups(t *testing.T) {
	var stderr bytes.Buffer
	if code := Controlplane([]string{"--kubeconfig", "/nonexistent", "--api-groups", "kubefed"}, &stderr); code != 2 {
		t.Fatalf("exit code = %d, want 2; stderr %q", code, stderr.String())
	}
	if want := `--api-groups: unknown API groups "kubefed"`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q does not say %q", stderr.String(), want)
	}
}

func TestHclogSink(t *testing.T) {
	var out bytes.Buffer
	log := logr.New(&hclogSink{logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &out})})
	log.WithName("scheduler").WithValues("binding", "default/web").Info("scheduled", "clusters", 2)
	log.V(2).Info("trace is off")
	log.Error(errors.New("boom"), "failed")
	got := out.String()
	for _, want := range []string{"[INFO]  scheduler: scheduled: binding=default/web clusters=2", "[ERROR] failed: error=boom"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "trace is off") {
		t.Errorf("V(2) logged at Debug level:\n%s", got)
	}
}
