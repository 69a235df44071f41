package terraform

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// secretConfig declares one member and a Secret placed there, with a
// password in data (base64, as a Secret's data is) and a token in
// stringData. sensitiveKinds goes into the provider block.
func secretConfig(c *testenv.Cluster, password, token string) string {
	return requiredProvidersHCL + providerHCL("secrets", "") + memberClusterHCL("east", c, "") +
		policyHCL("db", "default", "v1", "Secret", []string{"east"}, "") + fmt.Sprintf(`
resource "flotilla_manifest" "db" {
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    metadata   = { name = "db", namespace = "default", labels = { app = "db" } }
    type       = "Opaque"
    data       = { password = %q, user = %q }
    stringData = { token = %q }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.db]
}
`, base64.StdEncoding.EncodeToString([]byte(password)), base64.StdEncoding.EncodeToString([]byte("admin")), token)
}

// secretForms is every form a secret value could leak in: as given and base64.
func secretForms(values ...string) []string {
	var out []string
	for _, v := range values {
		out = append(out, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return out
}

// TestAccManifestSecretStaysOut is issue 14's item 7 with the real
// terraform: a Secret's values appear in neither the human plan nor
// `terraform show -json` of the plan and the state, except inside values
// Terraform marks sensitive; the state's computed attributes hold none of
// them; a refresh finds no drift; a changed key shows as a changed hash on
// that key; and the member receives the real values.
func TestAccManifestSecretStaysOut(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	const password1, password2, token = "pw-one-7f3a9c", "pw-two-0b5e21", "tok-4d8e6f1a"
	d.write(secretConfig(c, password1, token))

	out := d.mustRun("plan", "-no-color", "-out=first.tfplan")
	assertNoSecret(t, "the human plan", out, secretForms(password1, token))
	if !strings.Contains(out, sensitiveShown) {
		t.Fatalf("the create's plan shows no sensitive value in rendered:\n%s", out)
	}
	assertNoSecretInJSON(t, "show -json of the plan", d.mustRun("show", "-json", "first.tfplan"), secretForms(password1, token))
	d.mustRun("apply", "-auto-approve", "-no-color", "first.tfplan")

	cs := c.Clientset(t)
	checkSecret := func(want map[string]string) {
		t.Helper()
		s, err := cs.CoreV1().Secrets("default").Get(t.Context(), "db", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the member has no Secret default/db: %v", err)
		}
		for k, v := range want {
			if string(s.Data[k]) != v {
				t.Errorf("the member's Secret has %s=%q, want %q", k, s.Data[k], v)
			}
		}
	}
	checkSecret(map[string]string{"password": password1, "user": "admin", "token": token})
	assertNoSecretInJSON(t, "show -json of the state", d.mustRun("show", "-json"), secretForms(password1, token))
	assertComputedClean(t, d, secretForms(password1, token))
	d.expectEmptyPlan()

	// One key changes: the plan shows that key's hash change, and only its.
	d.write(secretConfig(c, password2, token))
	out = d.mustRun("plan", "-no-color", "-out=second.tfplan")
	assertNoSecret(t, "the human plan of the change", out, secretForms(password1, password2, token))
	// The tags are keyed with the resource's own key, which the test does
	// not know either: the line shows one tag giving way to another.
	changed := false
	for line := range strings.Lines(out) {
		if strings.Contains(line, "password") && strings.Count(line, "(sensitive value hmac:") == 2 && strings.Contains(line, "->") {
			changed = true
		}
		if strings.Contains(line, "token") && strings.Contains(line, "->") && strings.Contains(line, "sensitive value") {
			t.Errorf("the unchanged token shows as changed: %s", line)
		}
	}
	if !changed {
		t.Fatalf("the plan does not show password changing from one tag to another:\n%s", out)
	}
	assertNoSecretInJSON(t, "show -json of the changed plan", d.mustRun("show", "-json", "second.tfplan"), secretForms(password1, password2, token))
	d.mustRun("apply", "-auto-approve", "-no-color", "second.tfplan")
	checkSecret(map[string]string{"password": password2, "user": "admin", "token": token})
	assertComputedClean(t, d, secretForms(password1, password2, token))
	d.mustRun("destroy", "-auto-approve", "-no-color")
}

// assertNoSecret fails if text holds any of the forms.
func assertNoSecret(t *testing.T, what, text string, forms []string) {
	t.Helper()
	for _, s := range forms {
		if strings.Contains(text, s) {
			t.Fatalf("%s holds the secret %q:\n%s", what, s, text)
		}
	}
}

// assertNoSecretInJSON checks terraform's JSON plan or state: outside the
// values it marks sensitive, no string holds a form of a secret. The
// configuration and variables sections, the user's own inputs, are not the
// provider's to hide.
func assertNoSecretInJSON(t *testing.T, what, doc string, forms []string) {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatalf("%s is not JSON: %v", what, err)
	}
	var found []string
	walkModule := func(at string, mod any) {
		m, _ := mod.(map[string]any)
		resources, _ := m["resources"].([]any)
		for i, r := range resources {
			res, _ := r.(map[string]any)
			findUnmarked(fmt.Sprintf("%s.resources[%d](%v).values", at, i, res["address"]), res["values"], res["sensitive_values"], forms, &found)
		}
	}
	if v, ok := root["values"].(map[string]any); ok { // state
		walkModule("values.root_module", v["root_module"])
	}
	if v, ok := root["planned_values"].(map[string]any); ok {
		walkModule("planned_values.root_module", v["root_module"])
	}
	if p, ok := root["prior_state"].(map[string]any); ok {
		if v, ok := p["values"].(map[string]any); ok {
			walkModule("prior_state.values.root_module", v["root_module"])
		}
	}
	changes, _ := root["resource_changes"].([]any)
	for i, rc := range changes {
		ch, _ := rc.(map[string]any)["change"].(map[string]any)
		findUnmarked(fmt.Sprintf("resource_changes[%d].change.before", i), ch["before"], ch["before_sensitive"], forms, &found)
		findUnmarked(fmt.Sprintf("resource_changes[%d].change.after", i), ch["after"], ch["after_sensitive"], forms, &found)
	}
	if len(root) == 0 || (root["values"] == nil && root["planned_values"] == nil) {
		t.Fatalf("%s has neither values nor planned_values: %.500s", what, doc)
	}
	if len(found) > 0 {
		t.Fatalf("%s holds a secret outside sensitive values:\n%s", what, strings.Join(found, "\n"))
	}
}

// findUnmarked walks v beside its sensitivity marks (true, or the same shape).
func findUnmarked(at string, v, sensitive any, forms []string, found *[]string) {
	if sensitive == true {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		marks, _ := sensitive.(map[string]any)
		for k, e := range x {
			findUnmarked(at+"."+k, e, marks[k], forms, found)
		}
	case []any:
		marks, _ := sensitive.([]any)
		for i, e := range x {
			var m any
			if i < len(marks) {
				m = marks[i]
			}
			findUnmarked(fmt.Sprintf("%s[%d]", at, i), e, m, forms, found)
		}
	case string:
		for _, s := range forms {
			if strings.Contains(x, s) {
				*found = append(*found, at+" holds "+s)
			}
		}
	}
}

// assertComputedClean reads the state file: flotilla_manifest's computed
// attributes (rendered, dependencies_rendered, status) hold no secret. The
// manifest argument itself is stored as configured, marked sensitive:
// Terraform requires a configured argument to be stored as given.
func assertComputedClean(t *testing.T, d *tfDriver, forms []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Attributes          map[string]json.RawMessage `json:"attributes"`
				SensitiveAttributes []any                      `json:"sensitive_attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, r := range state.Resources {
		if r.Type != "flotilla_manifest" {
			continue
		}
		for _, in := range r.Instances {
			seen = true
			for _, attr := range []string{"rendered", "dependencies_rendered", "status", "placement", "id"} {
				assertNoSecret(t, "state attribute "+attr, string(in.Attributes[attr]), forms)
			}
			if !strings.Contains(string(in.Attributes["rendered"]), "(sensitive value") {
				t.Errorf("rendered in state holds no hashed value: %s", in.Attributes["rendered"])
			}
		}
	}
	if !seen {
		t.Fatal("the state holds no flotilla_manifest")
	}
}
