package override

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// FuzzOverride applies random overriders to random manifests. Overriders
// that Karmada's validation refuses never reach the engine, so they are
// skipped; for the others Apply must not panic, must give the same result
// twice, must leave the template untouched when it fails, and must produce
// a template that still encodes as JSON.
func FuzzOverride(f *testing.F) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},` +
		`"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","command":["run"],"args":["--a"]}]}}}}`
	for _, seed := range []struct{ manifest, overriders string }{
		{deployment, `{"imageOverrider":[{"component":"Registry","operator":"replace","value":"registry.eu.example.com"}]}`},
		{deployment, `{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":5},{"path":"/metadata/labels/app","operator":"remove"}]}`},
		{deployment, `{"commandOverrider":[{"containerName":"web","operator":"add","value":["--x"]}],"argsOverrider":[{"containerName":"web","operator":"remove","value":["--a"]}]}`},
		{deployment, `{"labelsOverrider":[{"operator":"add","value":{"tier":"gold"}}],"annotationsOverrider":[{"operator":"replace","value":{"a":"b"}}]}`},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"config.yaml":"a: 1\nb: [2]\n"}}`,
			`{"fieldOverrider":[{"fieldPath":"/data/config.yaml","yaml":[{"subPath":"/b/0","operator":"replace","value":3}]}]}`},
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}`,
			`{"imageOverrider":[{"predicate":{"path":"/spec/containers/0/image"},"component":"Tag","operator":"add","value":"x"}]}`},
		{`{"kind":"Deployment"}`, `{"plaintext":[{"path":"/a/b/c","operator":"add","value":{"d":[1,2]}}]}`},
	} {
		f.Add([]byte(seed.manifest), []byte(seed.overriders))
	}
	cluster := &api.Cluster{}
	cluster.Name = "member1"
	f.Fuzz(func(t *testing.T, manifest, overriders []byte) {
		var content map[string]any
		if err := json.Unmarshal(manifest, &content); err != nil || content == nil {
			return
		}
		var o api.Overriders
		if err := json.Unmarshal(overriders, &o); err != nil {
			return
		}
		spec := api.OverrideSpec{OverrideRules: []api.RuleWithCluster{{Overriders: o}}}
		if errs := api.ValidateOverrideSpec(&spec, field.NewPath("spec")); len(errs) > 0 {
			return
		}
		overrides := []policy.AppliedOverride{{Kind: api.KindOverridePolicy, Namespace: "default", Name: "fuzz", Rules: spec.OverrideRules}}

		first := &unstructured.Unstructured{Object: deepCopy(t, content)}
		_, err1 := Apply(first, cluster, overrides)
		second := &unstructured.Unstructured{Object: deepCopy(t, content)}
		_, err2 := Apply(second, cluster, overrides)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("the same input failed once: %v / %v", err1, err2)
		}
		if err1 != nil {
			if err1.Error() != err2.Error() {
				t.Fatalf("two errors for the same input: %q / %q", err1, err2)
			}
			if !reflect.DeepEqual(first.Object, content) {
				t.Fatalf("a failed override changed the template: %v", err1)
			}
			return
		}
		if !reflect.DeepEqual(first.Object, second.Object) {
			t.Fatalf("two results for the same input:\n%v\n%v", first.Object, second.Object)
		}
		if _, err := json.Marshal(first.Object); err != nil {
			t.Fatalf("the overridden template does not encode: %v", err)
		}
	})
}

// deepCopy copies a decoded JSON document through JSON, so int64 and float
// values compare as the engine sees them.
func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
