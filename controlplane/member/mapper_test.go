package member

import (
	"context"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crd is a namespaced CRD in group mapper.flotilla.io, version v1.
func crd(kind, plural string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + ".mapper.flotilla.io"},
		"spec": map[string]any{
			"group": "mapper.flotilla.io",
			"scope": "Namespaced",
			"names": map[string]any{"kind": kind, "plural": plural, "listKind": kind + "List"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
}

func testMapper(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}); err != nil {
		t.Fatalf("map Deployment: %v", err)
	}
	widget := schema.GroupKind{Group: "mapper.flotilla.io", Kind: "Widget"}
	if _, err := c.Mapper.RESTMapping(widget, "v1"); !apimeta.IsNoMatchError(err) {
		t.Fatalf("map Widget before its CRD exists = %v, want a no-match error", err)
	}

	for _, step := range []struct{ kind, plural string }{{"Widget", "widgets"}, {"Gadget", "gadgets"}} {
		// Gadget joins a group and version the mapper has already learnt.
		if _, err := c.Dynamic.Resource(crdGVR).Create(t.Context(), crd(step.kind, step.plural), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create CRD %s: %v", step.plural, err)
		}
		t.Cleanup(func() {
			_ = c.Dynamic.Resource(crdGVR).Delete(context.Background(), step.plural+".mapper.flotilla.io", metav1.DeleteOptions{})
		})
		gk := schema.GroupKind{Group: "mapper.flotilla.io", Kind: step.kind}
		var mapping *apimeta.RESTMapping
		err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			var err error
			mapping, err = c.Mapper.RESTMapping(gk, "v1")
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("the mapper never learnt %s: %v", step.kind, err)
		}
		want := schema.GroupVersionResource{Group: "mapper.flotilla.io", Version: "v1", Resource: step.plural}
		if mapping.Resource != want || mapping.Scope.Name() != apimeta.RESTScopeNameNamespace {
			t.Errorf("mapping of %s = %v %s, want %v namespaced", step.kind, mapping.Resource, mapping.Scope.Name(), want)
		}
		if again, _ := cache.Get(t.Context(), m.Name, tokenConn(m)); again != c {
			t.Errorf("learning %s rebuilt the cached client", step.kind)
		}
	}
}
