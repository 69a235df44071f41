package execution

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

func testPreserve(t *testing.T, e *env) {
	e.makeNamespace(t, "keep")
	ex := e.executor()
	tmpl := apitest.MakeConfigMap("kept", "keep").Data("k", "v").Label("team", "a").Obj()
	mustSucceed(t, ex.Apply(t.Context(), applyReq(t, tmpl, e.names...)))

	// member2 leaves the placement: its object is released, not deleted.
	req := applyReq(t, tmpl, "member1", "member3")
	req.Prune = []string{"member2"}
	req.PreserveResourcesOnDeletion = true
	res := ex.Apply(t.Context(), req)
	mustSucceed(t, res)
	if o, _ := res.Find("member2", req.Template); o.Action != ActionReleased {
		t.Fatalf("prune with preserve: member2 %s, want Released%s", o.Action, summary(res))
	}
	checkReleased(t, "member2", e.get(t, "member2", configMaps, "keep", "kept"))

	// Deleting the template with preserve releases the rest.
	res = ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: e.names, PreserveResourcesOnDeletion: true})
	mustSucceed(t, res)
	want := []string{"member1 ConfigMap keep/kept: Released", "member2 ConfigMap keep/kept: Skipped", "member3 ConfigMap keep/kept: Released"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("delete with preserve (-want +got):\n%s", diff)
	}
	for _, c := range e.names {
		checkReleased(t, c, e.get(t, c, configMaps, "keep", "kept"))
	}

	// Released objects are no longer flotilla's: a plain delete leaves them.
	res = ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: e.names})
	mustSucceed(t, res)
	for _, c := range e.names {
		if e.get(t, c, configMaps, "keep", "kept") == nil {
			t.Errorf("%s: a released object was deleted", c)
		}
	}
}

// checkReleased fails unless live exists with its content and user labels
// but without flotilla's labels, annotations and field ownership.
func checkReleased(t *testing.T, cluster string, live *unstructured.Unstructured) {
	t.Helper()
	if live == nil {
		t.Fatalf("%s: released object was deleted", cluster)
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "k"); got != "v" || live.GetLabels()["team"] != "a" {
		t.Errorf("%s: released object lost its content: data.k %q labels %v", cluster, got, live.GetLabels())
	}
	for _, k := range ownershipLabels {
		if _, ok := live.GetLabels()[k]; ok {
			t.Errorf("%s: released object keeps label %s", cluster, k)
		}
	}
	for _, k := range ownershipAnnotations {
		if _, ok := live.GetAnnotations()[k]; ok {
			t.Errorf("%s: released object keeps annotation %s", cluster, k)
		}
	}
	for _, m := range live.GetManagedFields() {
		if m.Manager == DefaultFieldManager {
			t.Errorf("%s: released object keeps managedFields entry %s/%s", cluster, m.Manager, m.Operation)
		}
	}
}

func TestReleasePatch(t *testing.T) {
	obj := func(managers ...string) *unstructured.Unstructured {
		o := apitest.MakeConfigMap("c", "ns").Label(render.LabelManagedBy, "flotilla").Label(render.LabelFleet, "prod").Label("team", "a").
			Annotation(render.AnnotationTemplate, "v1, Kind=ConfigMap, ns/c").Obj()
		o.SetResourceVersion("42")
		var entries []metav1.ManagedFieldsEntry
		for _, m := range managers {
			entries = append(entries, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1"})
		}
		o.SetManagedFields(entries)
		return o
	}
	cases := map[string]struct {
		live *unstructured.Unstructured
		want string
	}{
		"flotilla alone: every entry cleared": {
			live: obj("flotilla"),
			want: `{"metadata":{"annotations":{"flotilla.io/template":null},"labels":{"app.kubernetes.io/managed-by":null,"flotilla.io/fleet":null},"managedFields":[{}],"resourceVersion":"42"}}`,
		},
		"other managers kept": {
			live: obj("kubectl", "flotilla"),
			want: `{"metadata":{"annotations":{"flotilla.io/template":null},"labels":{"app.kubernetes.io/managed-by":null,"flotilla.io/fleet":null},"managedFields":[{"apiVersion":"v1","manager":"kubectl","operation":"Apply"}],"resourceVersion":"42"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := releasePatch(tc.live, "flotilla")
			if err != nil {
				t.Fatal(err)
			}
			var gotJSON, wantJSON any
			if err := json.Unmarshal(got, &gotJSON); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.want), &wantJSON); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantJSON, gotJSON); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}
