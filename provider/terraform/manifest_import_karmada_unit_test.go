package terraform

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
)

// TestGrantKarmada: an import grants the take-over of objects Karmada
// applied for one binding only; a hand-made object, one without a binding
// ID, or one of another binding is not granted.
func TestGrantKarmada(t *testing.T) {
	obj := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetLabels(labels)
		return u
	}
	rb := func(id string) map[string]string {
		return map[string]string{"karmada.io/managed": "true", "resourcebinding.karmada.io/permanent-id": id}
	}
	var grant *execution.KarmadaAdoption
	for _, c := range []struct {
		cluster string
		labels  map[string]string
		want    bool
	}{
		{"m1", rb("a"), true},
		{"m2", map[string]string{"app": "web"}, false},
		{"m3", map[string]string{"resourcebinding.karmada.io/permanent-id": "a"}, false},
		{"m4", map[string]string{"karmada.io/managed": "true"}, false},
		{"m5", rb("b"), false},
		{"m6", map[string]string{"karmada.io/managed": "true", "clusterresourcebinding.karmada.io/permanent-id": "a"}, false},
		{"m7", rb("a"), true},
	} {
		if got := grantKarmada(&grant, c.cluster, obj(c.labels)); got != c.want {
			t.Errorf("%s with labels %v: granted %v, want %v", c.cluster, c.labels, got, c.want)
		}
	}
	want := &execution.KarmadaAdoption{BindingPermanentID: "a", Clusters: []string{"m1", "m7"}, Label: true}
	if diff := cmp.Diff(want, grant); diff != "" {
		t.Errorf("grant (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&execution.KarmadaAdoption{BindingPermanentID: "a", Clusters: []string{"m7"}, Label: true}, karmadaLeft(grant, map[string]bool{"m1": true})); diff != "" {
		t.Errorf("left after m1 applied (-want +got):\n%s", diff)
	}
	if left := karmadaLeft(grant, map[string]bool{"m1": true, "m7": true}); left != nil {
		t.Errorf("left after every cluster applied: %+v, want none", left)
	}
}

// TestKarmadaView: the import records the object as its template declared
// it: without status, the apiserver's metadata and Karmada's keys, with
// the template's own labels and annotations.
func TestKarmadaView(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields": []any{map[string]any{"manager": "karmada-controller-manager"}},
			"labels": map[string]any{"app": "web", "karmada.io/managed": "true", "resourcebinding.karmada.io/permanent-id": "a",
				"work.karmada.io/permanent-id": "w", "propagationpolicy.karmada.io/permanent-id": "p"},
			"annotations": map[string]any{"team": "shop", "work.karmada.io/name": "web-1", "resourcetemplate.karmada.io/uid": "t",
				"propagationpolicy.karmada.io/name": "web"},
		},
		"data":   map[string]any{"v": "1"},
		"status": map[string]any{"x": "y"},
	}}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}, "annotations": map[string]any{"team": "shop"}},
		"data":     map[string]any{"v": "1"},
	}
	if diff := cmp.Diff(want, karmadaView(live).Object); diff != "" {
		t.Errorf("karmadaView (-want +got):\n%s", diff)
	}
}
