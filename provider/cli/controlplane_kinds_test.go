package cli

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
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

// TestControlplaneRefusesKindsItCannotDetect: a kind the host does not serve,
// or serves cluster-scoped, stops the process at start with a message
// naming the kind, instead of a detector that never runs.
func TestControlplaneRefusesKindsItCannotDetect(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	cases := map[string]struct {
		kind schema.GroupVersionKind
		want string
	}{
		"not served":     {schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, "template kind example.com/v1, Kind=Widget: the host does not serve it"},
		"cluster-scoped": {schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "template kind /v1, Kind=Namespace is cluster-scoped"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := runControlplane(t.Context(), controlplaneConfig{
				kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true,
				options: controller.Options{TemplateKinds: []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "Deployment"}, tc.kind}},
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
