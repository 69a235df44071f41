package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// trustConfig declares one member, reached with a token, and a ConfigMap
// placed there. providerExtra goes into the provider block.
func trustConfig(c *testenv.Cluster, providerExtra string) string {
	return requiredProvidersHCL + providerHCL("trust", providerExtra) + memberClusterHCL("east", c, "") +
		policyHCL("app", "default", "v1", "ConfigMap", []string{"east"}, "") + `
resource "flotilla_manifest" "app" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "app", namespace = "default" }
    data       = { v = "1" }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.app]
}
`
}

// editState rewrites the local state file with edit applied to the
// attributes of each resource of the given type.
func editState(t *testing.T, d *tfDriver, edit map[string]func(attrs map[string]any)) {
	t.Helper()
	file := filepath.Join(d.dir, "terraform.tfstate")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state["resources"].([]any) {
		res := r.(map[string]any)
		if f, ok := edit[res["type"].(string)]; ok {
			for _, in := range res["instances"].([]any) {
				f(in.(map[string]any)["attributes"].(map[string]any))
			}
		}
	}
	if b, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAccStateExecNotRun is the issue's "state can make refresh run
// commands" with the real terraform: a state edited so that the member is
// reached through a credential plugin (one that creates a marker file and
// then prints the real token) does not run it on refresh or destroy, and
// says why; destroy deletes nothing. Once the provider block trusts
// exactly that plugin, destroy runs it (the marker appears) and succeeds.
func TestAccStateExecNotRun(t *testing.T) {
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	d.write(trustConfig(c, ""))
	d.mustRun("apply", "-auto-approve", "-no-color")

	marker := filepath.Join(t.TempDir(), "exec-ran")
	credential := fmt.Sprintf(`{"apiVersion":%q,"kind":"ExecCredential","status":{"token":%q}}`, member.ExecAPIVersionV1, c.Token)
	script := fmt.Sprintf("touch %s; printf '%%s' '%s'", marker, credential)
	args := []string{"-c", script}
	recorded, err := json.Marshal(member.Connection{Host: c.Host, ClusterCACertificate: c.CAData,
		Exec: &member.ExecConfig{APIVersion: member.ExecAPIVersionV1, Command: "/bin/sh", Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	editState(t, d, map[string]func(map[string]any){
		"flotilla_manifest": func(a map[string]any) {
			a["connections"] = map[string]any{"east": string(recorded)}
		},
		"flotilla_cluster": func(a map[string]any) {
			a["token"] = nil
			a["exec"] = map[string]any{"api_version": member.ExecAPIVersionV1, "command": "/bin/sh", "args": args, "env": nil}
		},
	})
	ran := func() bool { _, err := os.Stat(marker); return err == nil }

	out := d.mustRun("plan", "-refresh-only", "-no-color")
	if ran() {
		t.Fatal("refresh ran the credential plugin recorded in state")
	}
	for _, want := range []string{
		"Cannot refresh cluster east",
		`Cannot refresh v1, Kind=ConfigMap, default/app in cluster east`,
		`runs the credential plugin "/bin/sh" (2 arguments, env [])`,
	} {
		if !wrappedMessage(want).MatchString(out) {
			t.Errorf("the refresh does not say %q:\n%s", want, out)
		}
	}

	out, code := d.run("destroy", "-auto-approve", "-no-color")
	if code == 0 || !wrappedMessage("a recorded connection is not trusted").MatchString(out) ||
		!wrappedMessage("no entry of the provider block's trusted_exec matches exactly").MatchString(out) {
		t.Fatalf("destroy with an untrusted recorded plugin exited %d:\n%s", code, out)
	}
	if ran() {
		t.Fatal("destroy ran the credential plugin recorded in state")
	}
	cs := c.Clientset(t)
	if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "app", metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused destroy deleted the ConfigMap (or it cannot be read): %v", err)
	}

	argsHCL, _ := json.Marshal(args)
	d.write(trustConfig(c, fmt.Sprintf(`trusted_exec = [{ command = "/bin/sh", args = %s }]`, argsHCL)))
	d.mustRun("destroy", "-auto-approve", "-no-color")
	if !ran() {
		t.Fatal("the trusted plugin never ran, so this test could not tell a refusal from a plugin that does not work")
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the trusted destroy left the ConfigMap: %v", err)
	}
}

// TestAccDataSourcesKeepNoCredentials: flotilla_placement and
// flotilla_cluster_status use the member's token and keep it out of state
// (the resource flotilla_cluster still records its own).
func TestAccDataSourcesKeepNoCredentials(t *testing.T) {
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	d.write(trustConfig(c, "") + fmt.Sprintf(`
data "flotilla_placement" "app" {
  manifest             = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "app", namespace = "default" } }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.app]
}
data "flotilla_cluster_status" "east" {
  name                   = "east"
  host                   = %s
  token                  = %s
  cluster_ca_certificate = %s
}
output "placement" { value = data.flotilla_placement.app.placement }
output "ready" { value = data.flotilla_cluster_status.east.ready }
`, quoteHCL(c.Host), quoteHCL(c.Token), quoteHCL(string(c.CAData))))
	d.mustRun("apply", "-auto-approve", "-no-color")
	out := d.mustRun("output", "-json")
	if !strings.Contains(out, `"east": 0`) && !strings.Contains(out, `"east":0`) || !strings.Contains(out, `"value": true`) {
		t.Fatalf("the data sources did not read the member:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Mode, Type string
			Instances  []struct {
				Attributes json.RawMessage `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	data := 0
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			holds := strings.Contains(string(in.Attributes), c.Token)
			switch {
			case r.Mode == "data" && holds:
				t.Errorf("data source %s stores the member's token: %.400s", r.Type, in.Attributes)
			case r.Type == "flotilla_cluster" && !holds:
				t.Errorf("the state file does not hold the token even where it must; the check above cannot fail")
			}
			if r.Mode == "data" {
				data++
			}
		}
	}
	if data != 2 {
		t.Fatalf("the state holds %d data sources, want 2", data)
	}
	d.mustRun("destroy", "-auto-approve", "-no-color")
}
