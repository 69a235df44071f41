package override

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// applyRule applies one rule with no target to a copy of obj.
func applyRule(t *testing.T, obj *unstructured.Unstructured, o api.Overriders) (*unstructured.Unstructured, error) {
	t.Helper()
	out := obj.DeepCopy()
	p := policy.AppliedOverride{Kind: api.KindOverridePolicy, Namespace: "default", Name: "p", Rules: []api.RuleWithCluster{{Overriders: o}}}
	_, err := Apply(out, apitest.MakeCluster("east").Obj(), []policy.AppliedOverride{p})
	return out, err
}

// mustApplyRule is applyRule for cases that must succeed.
func mustApplyRule(t *testing.T, obj *unstructured.Unstructured, o api.Overriders) *unstructured.Unstructured {
	t.Helper()
	out, err := applyRule(t, obj, o)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return out
}

// rawJSON encodes v as an apiextensions JSON value.
func rawJSON(t *testing.T, v any) apiextensionsv1.JSON {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return apiextensionsv1.JSON{Raw: b}
}

// nested reads a field for assertions.
func nested(t *testing.T, obj *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil {
		t.Fatalf("read %v: %v", fields, err)
	}
	return v
}

// containerField reads one field of a container by list and index.
func containerField(t *testing.T, obj *unstructured.Unstructured, podSpec []string, list string, index int, field string) any {
	t.Helper()
	items, _ := nested(t, obj, append(append([]string{}, podSpec...), list)...).([]any)
	if index >= len(items) {
		t.Fatalf("%s has %d items, want index %d", list, len(items), index)
	}
	return items[index].(map[string]any)[field]
}

var (
	templateSpec = []string{"spec", "template", "spec"}
	podSpec      = []string{"spec"}
	cronSpec     = []string{"spec", "jobTemplate", "spec", "template", "spec"}
)
