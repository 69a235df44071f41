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
