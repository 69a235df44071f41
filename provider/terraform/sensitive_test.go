package terraform

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// testKey is a resource's HMAC key in these tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

func secretObject(kind, apiVersion string, data, stringData map[string]any) map[string]any {
	obj := map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "db", "namespace": "shop", "labels": map[string]any{"app": "db"}},
		"type":     "Opaque",
	}
	if data != nil {
		obj["data"] = data
	}
	if stringData != nil {
		obj["stringData"] = stringData
	}
	return obj
}

// TestSensitiveRedact: a sensitive kind's data values never appear in what
// is shown, in clear or base64; equal values hash equally and a changed
// value changes only its own key's hash; other fields and other kinds stay
// as they are; the input is not modified.
func TestSensitiveRedact(t *testing.T) {
	const secret = "hunter2-very-secret"
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	kinds, err := parseSensitiveKinds([]string{"SealedSecret.bitnami.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		obj       map[string]any
		sensitive bool
	}{
		{"secret data", secretObject("Secret", "v1", map[string]any{"password": b64, "user": "YWRtaW4="}, nil), true},
		{"secret stringData", secretObject("Secret", "v1", nil, map[string]any{"password": secret}), true},
		{"custom kind", secretObject("SealedSecret", "bitnami.com/v1alpha1", map[string]any{"password": b64}, nil), true},
		{"same kind name, other group", secretObject("Secret", "example.com/v1", map[string]any{"password": b64}, nil), false},
		{"config map", secretObject("ConfigMap", "v1", map[string]any{"password": secret}, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.obj)
			out := kinds.redact(tc.obj, testKey)
			after, _ := json.Marshal(tc.obj)
			if string(before) != string(after) {
				t.Fatalf("redact modified its input:\n%s\n%s", before, after)
			}
			shown, _ := json.Marshal(out)
			leaked := strings.Contains(string(shown), secret) || strings.Contains(string(shown), b64)
			if leaked == tc.sensitive {
				t.Fatalf("sensitive=%v but the value shows=%v: %s", tc.sensitive, leaked, shown)
			}
			if tc.sensitive && !strings.Contains(string(shown), `"(sensitive value hmac:`) {
				t.Errorf("no hash shown: %s", shown)
			}
			if out["type"] != "Opaque" || out["metadata"].(map[string]any)["name"] != "db" {
				t.Errorf("fields other than data changed: %s", shown)
			}
		})
	}
	a := kinds.redact(secretObject("Secret", "v1", map[string]any{"password": b64, "user": "YWRtaW4="}, nil), testKey)
	b := kinds.redact(secretObject("Secret", "v1", map[string]any{"password": b64, "user": "YWRtaW4="}, nil), testKey)
	c := kinds.redact(secretObject("Secret", "v1", map[string]any{"password": "b3RoZXI=", "user": "YWRtaW4="}, nil), testKey)
	da, db, dc := a["data"].(map[string]any), b["data"].(map[string]any), c["data"].(map[string]any)
	if da["password"] != db["password"] || da["user"] != db["user"] {
		t.Errorf("equal values hash differently: %v %v", da, db)
	}
	if da["password"] == dc["password"] || da["user"] != dc["user"] {
		t.Errorf("a changed password must change its hash only: %v %v", da, dc)
	}
	if da["password"] == da["user"] {
		t.Errorf("two keys hash alike: %v", da)
	}
}

func TestParseSensitiveKinds(t *testing.T) {
	for _, bad := range []string{"", "v1/Secret", "apps/v1 Deployment", ".example.com"} {
		if _, err := parseSensitiveKinds([]string{bad}); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	kinds, err := parseSensitiveKinds(nil)
	if err != nil || !kinds.has(map[string]any{"apiVersion": "v1", "kind": "Secret"}) || kinds.has(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}) {
		t.Errorf("the default set must hold Secret and only Secret: %v %v", kinds, err)
	}
}

// TestWithStringData: a Secret's stringData, which the apiserver folds into
// data, is read back from the live data, so an unchanged Secret shows no
// drift and a changed value shows as a changed hash.
func TestWithStringData(t *testing.T) {
	desired := secretObject("Secret", "v1", map[string]any{"user": "YWRtaW4="}, map[string]any{"token": "tok"})
	managed := secretObject("Secret", "v1", map[string]any{"user": "YWRtaW4="}, nil)
	live := secretObject("Secret", "v1", map[string]any{"user": "YWRtaW4=", "token": base64.StdEncoding.EncodeToString([]byte("tok"))}, nil)
	kinds := sensitiveKinds{defaultSensitiveKind: true}
	shown := kinds.redact(desired, testKey)
	if got := kinds.redact(withStringData(shown, managed, live), testKey); !equalJSON(got, shown) {
		t.Errorf("an unchanged Secret shows drift:\n got %v\nwant %v", got, shown)
	}
	live["data"].(map[string]any)["token"] = base64.StdEncoding.EncodeToString([]byte("changed"))
	if got := kinds.redact(withStringData(shown, managed, live), testKey); equalJSON(got, shown) {
		t.Error("a changed stringData value shows no drift")
	}
	if _, ok := managed["stringData"]; ok {
		t.Error("withStringData modified the managed view")
	}
	cm := secretObject("ConfigMap", "v1", nil, map[string]any{"token": "tok"})
	if got := withStringData(cm, managed, live); !equalJSON(got, managed) {
		t.Error("a ConfigMap got stringData")
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestSecretPINNotGuessable is issue 31's item 4 on the pure function: the
// attack recovers a PIN from a plain salted hash and from the plain
// rendered hash (so it can fail), and recovers nothing from what redact
// shows, with a key or without one.
func TestSecretPINNotGuessable(t *testing.T) {
	const pin = "4821"
	obj := pinSecret(t, pin)
	kinds := sensitiveKinds{defaultSensitiveKind: true}

	plain := runtime.DeepCopyJSON(obj)
	plain["data"] = map[string]any{"pin": plainSaltedHash("Secret/shop/db", "data", "pin", base64.StdEncoding.EncodeToString([]byte(pin)))}
	delete(plain["metadata"].(map[string]any), "annotations")
	if got, ok := guessPIN(plain, "pin"); !ok || got != pin {
		t.Fatalf("the attack does not recover the PIN from a plain salted hash (got %q): it could not fail", got)
	}
	annotated := runtime.DeepCopyJSON(obj)
	annotated["data"] = map[string]any{"pin": sensitiveShown}
	if got, ok := guessPIN(annotated, "pin"); !ok || got != pin {
		t.Fatalf("the attack does not recover the PIN from the rendered hash (got %q): it could not fail", got)
	}

	for name, key := range map[string][]byte{"keyed": testKey, "no key": nil} {
		shown := kinds.redact(obj, key)
		if got, ok := guessPIN(shown, "pin"); ok {
			t.Errorf("%s: the PIN %s was recovered from %v", name, got, shown)
		}
		b, _ := json.Marshal(shown)
		if strings.Contains(string(b), obj["metadata"].(map[string]any)["annotations"].(map[string]any)[render.AnnotationRenderedHash].(string)) {
			t.Errorf("%s: the plain rendered hash is shown: %s", name, b)
		}
	}
	other := kinds.redact(pinSecret(t, "9999"), testKey)
	if kinds.redact(obj, testKey)["data"].(map[string]any)["pin"] == other["data"].(map[string]any)["pin"] {
		t.Error("two PINs show the same tag: a change would not show")
	}
	if kinds.redact(obj, testKey)["data"].(map[string]any)["pin"] == kinds.redact(obj, []byte("another key of thirty-two bytes!"))["data"].(map[string]any)["pin"] {
		t.Error("two keys tag a value alike: the tag does not depend on the key")
	}
}

// TestWithTagsOf: a recorded Secret shown untagged (the create's plan) or
// with an earlier version's hashes takes the live tags and annotation and
// keeps its own other fields; other kinds are left alone.
func TestWithTagsOf(t *testing.T) {
	kinds := sensitiveKinds{defaultSensitiveKind: true}
	live := kinds.redact(pinSecret(t, "4821"), testKey)
	recorded := kinds.redact(pinSecret(t, "4821"), nil)
	recorded["type"] = "Opaque"
	got := kinds.withTagsOf(recorded, live)
	if !equalJSON(got, live) {
		t.Errorf("the untagged record did not take the tags:\n got %v\nwant %v", got, live)
	}
	if recorded["data"].(map[string]any)["pin"] != sensitiveShown {
		t.Error("withTagsOf modified the record")
	}
	cm := secretObject("ConfigMap", "v1", map[string]any{"pin": "x"}, nil)
	if got := kinds.withTagsOf(cm, live); !equalJSON(got, cm) {
		t.Error("a ConfigMap took tags")
	}
}
