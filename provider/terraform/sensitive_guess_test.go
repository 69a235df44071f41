package terraform

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// plainSaltedHash is how a value was shown before tags were keyed: the
// salt is the object's identity, which the plan shows too. An attacker who
// reads a plan computes it for each guess.
func plainSaltedHash(salt, field, key, value string) string {
	sum := sha256.Sum256([]byte("flotilla-sensitive\x00" + salt + "\x00" + field + "\x00" + key + "\x00" + value))
	return fmt.Sprintf("(sensitive value sha256:%x)", sum[:8])
}

// guessPIN is the offline attack on a shown Secret whose data holds a
// 4-digit PIN under key: every PIN is tried against all the shown object
// says about it, the value's own tag and the rendered-hash annotation (a
// hash of the whole object, whose other fields the plan shows). It knows
// every formula the provider uses, but no key the provider keeps out of the
// plan.
func guessPIN(shown map[string]any, key string) (string, bool) {
	data, _ := shown["data"].(map[string]any)
	tag, _ := data[key].(string)
	meta, _ := shown["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	annotation, _ := annotations[render.AnnotationRenderedHash].(string)
	kind, _ := shown["kind"].(string)
	namespace, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	salt := kind + "/" + namespace + "/" + name
	guess := runtime.DeepCopyJSON(shown)
	for i := range 10000 {
		pin := fmt.Sprintf("%04d", i)
		b64 := base64.StdEncoding.EncodeToString([]byte(pin))
		if tag == plainSaltedHash(salt, "data", key, b64) {
			return pin, true
		}
		if annotation == "" {
			continue
		}
		guess["data"].(map[string]any)[key] = b64
		if h, err := render.RenderedHash(&unstructured.Unstructured{Object: guess}); err == nil && h == annotation {
			return pin, true
		}
	}
	return "", false
}

// pinSecret is a rendered Secret holding one PIN, its rendered-hash
// annotation stamped as the renderer does.
func pinSecret(t *testing.T, pin string) map[string]any {
	t.Helper()
	obj := secretObject("Secret", "v1", map[string]any{"pin": base64.StdEncoding.EncodeToString([]byte(pin))}, nil)
	u := &unstructured.Unstructured{Object: obj}
	h, err := render.RenderedHash(u)
	if err != nil {
		t.Fatal(err)
	}
	u.SetAnnotations(map[string]string{render.AnnotationRenderedHash: h})
	return u.Object
}

// pinConfig declares one member and a Secret holding only a PIN.
func pinConfig(c *testenv.Cluster, pin string) string {
	return requiredProvidersHCL + providerHCL("pin", "") + memberClusterHCL("east", c, "") +
		policyHCL("pin", "default", "v1", "Secret", []string{"east"}, "") + fmt.Sprintf(`
resource "flotilla_manifest" "pin" {
  manifest = {
    apiVersion = "v1"
    kind       = "Secret"
    metadata   = { name = "pin", namespace = "default" }
    type       = "Opaque"
    data       = { pin = %q }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.pin]
}
`, base64.StdEncoding.EncodeToString([]byte(pin)))
}

// shownRendered is flotilla_manifest.pin's rendered object for east in
// `terraform show -json` of a plan (the planned value) or of the state.
func shownRendered(t *testing.T, doc string) map[string]any {
	t.Helper()
	var root struct {
		ResourceChanges []struct {
			Address string
			Change  struct{ After map[string]any }
		} `json:"resource_changes"`
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string
					Values  map[string]any
				}
			} `json:"root_module"`
		}
	}
	if err := json.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	for _, rc := range root.ResourceChanges {
		if rc.Address == "flotilla_manifest.pin" {
			values = rc.Change.After
		}
	}
	for _, r := range root.Values.RootModule.Resources {
		if r.Address == "flotilla_manifest.pin" {
			values = r.Values
		}
	}
	rendered, _ := values["rendered"].(map[string]any)
	encoded, ok := rendered["east"].(string)
	var east map[string]any
	if !ok || json.Unmarshal([]byte(encoded), &east) != nil {
		t.Fatalf("no rendered object for east in: %.300s", rendered)
	}
	return east
}

// privateSensitiveKeyOf reads flotilla_manifest.pin's HMAC key from the
// state file's private data (base64 of the framework's JSON map).
func privateSensitiveKeyOf(t *testing.T, d *tfDriver) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string
			Instances []struct{ Private string }
		}
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Resources {
		if r.Type != "flotilla_manifest" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(r.Instances[0].Private)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string][]byte
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("private state: %v", err)
		}
		var key []byte
		if err := json.Unmarshal(m["sensitive"], &key); err != nil || len(key) == 0 {
			return nil
		}
		return key
	}
	t.Fatal("the state holds no flotilla_manifest")
	return nil
}

// TestAccSecretPINNotGuessable is issue 31's item 4 with the real
// terraform: neither the plan that creates a Secret holding a PIN nor the
// plan that changes it lets the PIN be brute-forced from `terraform show
// -json`; the changed plan still shows the pin key changing, the HMAC key
// appears in neither the plan nor the state's JSON, and a state written
// before keys (plain salted hashes, no key) plans empty after refresh.
func TestAccSecretPINNotGuessable(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	const pin1, pin2 = "4821", "7390"
	d.write(pinConfig(c, pin1))
	d.mustRun("plan", "-no-color", "-out=create.tfplan")
	if got, ok := guessPIN(shownRendered(t, d.mustRun("show", "-json", "create.tfplan")), "pin"); ok {
		t.Fatalf("the PIN %s was recovered from the create's plan", got)
	}
	d.mustRun("apply", "-auto-approve", "-no-color", "create.tfplan")
	d.expectEmptyPlan()
	key := privateSensitiveKeyOf(t, d)
	if len(key) == 0 {
		t.Fatal("the resource has no key in its private state")
	}

	d.write(pinConfig(c, pin2))
	out := d.mustRun("plan", "-no-color", "-out=change.tfplan")
	changed := false
	for line := range strings.Lines(out) {
		if strings.Contains(line, "pin") && strings.Contains(line, "(sensitive value hmac:") && strings.Contains(line, "->") {
			changed = true
		}
	}
	if !changed {
		t.Fatalf("the plan does not show the pin changing:\n%s", out)
	}
	shows := map[string]string{"the changed plan": d.mustRun("show", "-json", "change.tfplan"), "the state": d.mustRun("show", "-json")}
	for what, doc := range shows {
		if got, ok := guessPIN(shownRendered(t, doc), "pin"); ok {
			t.Errorf("the PIN %s was recovered from show -json of %s", got, what)
		}
		for _, form := range []string{base64.StdEncoding.EncodeToString(key), hex.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key)} {
			if strings.Contains(doc, form) {
				t.Errorf("show -json of %s holds the HMAC key", what)
			}
		}
	}
	d.mustRun("apply", "-auto-approve", "-no-color", "change.tfplan")
	d.expectEmptyPlan()

	// A state written before keys: plain salted hashes and the plain
	// rendered hash in rendered, no key in private state.
	live, err := c.Clientset(t).CoreV1().Secrets("default").Get(t.Context(), "pin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	editState(t, d, map[string]func(map[string]any){
		"flotilla_manifest": func(a map[string]any) {
			rendered := a["rendered"].(map[string]any)
			var east map[string]any
			if err := json.Unmarshal([]byte(rendered["east"].(string)), &east); err != nil {
				t.Fatal(err)
			}
			east["data"] = map[string]any{"pin": plainSaltedHash("Secret/default/pin", "data", "pin", base64.StdEncoding.EncodeToString([]byte(pin2)))}
			east["metadata"].(map[string]any)["annotations"].(map[string]any)[render.AnnotationRenderedHash] = live.Annotations[render.AnnotationRenderedHash]
			b, _ := json.Marshal(east)
			rendered["east"] = string(b)
		},
	})
	dropPrivateKey(t, d, "sensitive")
	d.expectEmptyPlan()
	d.mustRun("apply", "-refresh-only", "-auto-approve", "-no-color")
	if privateSensitiveKeyOf(t, d) == nil {
		t.Error("the refresh of an old state made no key")
	}
	if got, ok := guessPIN(shownRendered(t, d.mustRun("show", "-json")), "pin"); ok {
		t.Errorf("the PIN %s was recovered from the upgraded state", got)
	}
	d.mustRun("destroy", "-auto-approve", "-no-color")
}

// dropPrivateKey removes one key from flotilla_manifest's private state in
// the state file, as a state written before that key existed.
func dropPrivateKey(t *testing.T, d *tfDriver, name string) {
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
		if res["type"] != "flotilla_manifest" {
			continue
		}
		for _, in := range res["instances"].([]any) {
			inst := in.(map[string]any)
			raw, err := base64.StdEncoding.DecodeString(inst["private"].(string))
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			delete(m, name)
			raw, _ = json.Marshal(m)
			inst["private"] = base64.StdEncoding.EncodeToString(raw)
		}
	}
	if b, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
