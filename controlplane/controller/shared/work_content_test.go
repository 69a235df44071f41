package shared

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

func TestManifestsDigest(t *testing.T) {
	digest := func(raw ...string) string {
		t.Helper()
		ms := make([]api.Manifest, len(raw))
		for i, r := range raw {
			ms[i] = api.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}}
		}
		d, err := ManifestsDigest(ms)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := digest(`{"b":1,"a":{"y":2,"x":"s"}}`), digest(` { "a" : {"x":"s","y":2}, "b" : 1 }`); a != b {
		t.Errorf("the same object encoded two ways has digests %s and %s", a, b)
	}
	for name, other := range map[string]string{
		"a changed value":        `{"b":2,"a":{"y":2,"x":"s"}}`,
		"a large number changed": `{"b":1,"a":{"y":9007199254740993,"x":"s"}}`,
		"an added field":         `{"b":1,"a":{"y":2,"x":"s","hostPath":"/"}}`,
	} {
		if digest(other) == digest(`{"b":1,"a":{"y":2,"x":"s"}}`) {
			t.Errorf("%s keeps the digest", name)
		}
	}
	if digest(`{"a":1}`, `{"b":1}`) == digest(`{"a":1,"b":1}`) {
		t.Error("two manifests and their merge share a digest")
	}
	if _, err := ManifestsDigest([]api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"a":1}{"b":2}`)}}}); err == nil {
		t.Error("a manifest of two JSON values has a digest")
	}
}
