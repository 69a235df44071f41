package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestKarmadaAdoptionCovers: an adoption covers only Karmada's object of
// the binding it names, in a cluster it names, and reads the binding's
// permanent ID under the key of the binding's kind (Karmada labels a
// ClusterResourceBinding's objects with its own key).
func TestKarmadaAdoptionCovers(t *testing.T) {
	object := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetLabels(labels)
		return u
	}
	rb := map[string]string{api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelBindingPermanentID: "id-1"}
	crb := map[string]string{api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelClusterBindingPermanentID: "id-1"}
	for _, tc := range []struct {
		name     string
		adoption *KarmadaAdoption
		cluster  string
		labels   map[string]string
		want     bool
	}{
		{"resourcebinding object", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", rb, true},
		{"clusterresourcebinding object", &KarmadaAdoption{BindingPermanentID: "id-1", ClusterBinding: true, Clusters: []string{"east"}}, "east", crb, true},
		{"clusterresourcebinding id under the resourcebinding key", &KarmadaAdoption{BindingPermanentID: "id-1", ClusterBinding: true, Clusters: []string{"east"}}, "east", rb, false},
		{"resourcebinding id under the clusterresourcebinding key", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", crb, false},
		{"other binding", &KarmadaAdoption{BindingPermanentID: "id-2", Clusters: []string{"east"}}, "east", rb, false},
		{"cluster not recorded", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"west"}}, "east", rb, false},
		{"not managed by karmada", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", map[string]string{api.KarmadaLabelBindingPermanentID: "id-1"}, false},
		{"no adoption", nil, "east", rb, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.adoption.covers(tc.cluster, object(tc.labels)); got != tc.want {
				t.Fatalf("covers = %v, want %v", got, tc.want)
			}
		})
	}
}

// testKarmadaTakeOver: the objects a stopped Karmada applied for a
// binding are taken over without a write while unchanged, and removing the
// template deletes them as Karmada would have, before flotilla ever wrote
// its labels on them. An object of another Karmada binding, and one in a
// cluster the grant does not name, are left alone.
func testKarmadaTakeOver(t *testing.T, e *env) {
	e.makeNamespace(t, "taken")
	tmpl := apitest.MakeConfigMap("web", "taken").Data("k", "v").Obj()
	karmadas := func(binding string) *unstructured.Unstructured {
		obj := tmpl.DeepCopy()
		obj.SetLabels(map[string]string{api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelBindingPermanentID: binding})
		return obj
	}
	m1, m2, m3 := e.names[0], e.names[1], e.names[2]
	before := e.create(t, m1, configMaps, karmadas("id-1")).GetResourceVersion()
	e.create(t, m2, configMaps, karmadas("id-other"))
	e.create(t, m3, configMaps, karmadas("id-1"))
	grant := &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{m1, m2}}

	ex := e.executor()
	req := applyReq(t, tmpl, m1)
	req.Karmada = grant
	mustSucceed(t, ex.Apply(t.Context(), req))
	if got := e.get(t, m1, configMaps, "taken", "web").GetResourceVersion(); got != before {
		t.Fatalf("%s: the taken-over object was written (resourceVersion %s, then %s)", m1, before, got)
	}

	res := ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: e.names, Karmada: grant})
	mustSucceed(t, res)
	want := []string{m1 + " ConfigMap taken/web: Pruned", m2 + " ConfigMap taken/web: Skipped", m3 + " ConfigMap taken/web: Skipped"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("delete with the take-over grant (-want +got):\n%s%s", diff, summary(res))
	}
	if e.get(t, m1, configMaps, "taken", "web") != nil {
		t.Errorf("%s: the taken-over object outlived its template", m1)
	}
	for _, c := range []string{m2, m3} {
		if e.get(t, c, configMaps, "taken", "web") == nil {
			t.Errorf("%s: an object the grant does not cover was deleted", c)
		}
	}
}
