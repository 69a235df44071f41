package execution

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

var (
	crds    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgets = schema.GroupVersionResource{Group: "flotilla.test", Version: "v1", Resource: "widgets"}
)

// widgetCRD defines the namespaced kind Widget in group flotilla.test.
func widgetCRD() *unstructured.Unstructured {
	return apitest.MakeTemplate("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.flotilla.test", "").
		Set("flotilla.test", "spec", "group").
		Set("Namespaced", "spec", "scope").
		Set(map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}, "spec", "names").
		Set([]any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{
				"type": "object",
				"properties": map[string]any{"spec": map[string]any{
					"type":       "object",
					"properties": map[string]any{"size": map[string]any{"type": "integer"}},
				}},
			}},
		}}, "spec", "versions").Obj()
}

func testCRD(t *testing.T, e *env) {
	e.makeNamespace(t, "crd")
	ex := e.executor()
	widget := apitest.MakeTemplate("flotilla.test/v1", "Widget", "w1", "crd").Set(int64(3), "spec", "size").Obj()
	crd := widgetCRD()

	// The instance comes first in the batch; the CRD still goes first.
	res := ex.ApplyBatch(t.Context(), []ApplyRequest{applyReq(t, widget, e.names...), applyReq(t, crd, e.names...)})
	mustSucceed(t, res)
	var want []string
	for _, c := range e.names {
		want = append(want, c+" CustomResourceDefinition widgets.flotilla.test: Applied", c+" Widget crd/w1: Applied")
	}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("batch (-want +got):\n%s", diff)
	}
	for _, c := range e.names {
		if ok, err := established(e.get(t, c, crds, "", "widgets.flotilla.test")); !ok || err != nil {
			t.Errorf("%s: CRD not established (%v)", c, err)
		}
		live := e.get(t, c, widgets, "crd", "w1")
		if live == nil {
			t.Fatalf("%s: Widget missing", c)
		}
		if size, _, _ := unstructured.NestedInt64(live.Object, "spec", "size"); size != 3 {
			t.Errorf("%s: widget size %d, want 3", c, size)
		}
	}

	// Deleting both removes the instance before its definition.
	res = ex.Delete(t.Context(),
		DeleteRequest{Template: api.TemplateRefOf(crd), Clusters: e.names},
		DeleteRequest{Template: api.TemplateRefOf(widget), Clusters: e.names})
	mustSucceed(t, res)
	want = nil
	for _, c := range e.names {
		want = append(want, c+" Widget crd/w1: Pruned", c+" CustomResourceDefinition widgets.flotilla.test: Pruned")
	}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("delete (-want +got):\n%s", diff)
	}

	// A kind no member serves fails clearly, per cluster.
	gadget := apitest.MakeTemplate("flotilla.test/v1", "Gadget", "g1", "crd").Obj()
	res = ex.Apply(t.Context(), applyReq(t, gadget, "member1"))
	wantMsg := "apply Gadget crd/g1 to cluster member1: the cluster does not serve flotilla.test/v1, Kind=Gadget"
	if err := res.Err(); err == nil || err.Error() != wantMsg {
		t.Errorf("unknown kind:\n got %v\nwant %s", err, wantMsg)
	}
}

func TestEstablished(t *testing.T) {
	crd := func(conditions ...map[string]any) *unstructured.Unstructured {
		var list []any
		for _, c := range conditions {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
	}
	cond := func(typ, status string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": typ + " is " + status}
	}
	cases := map[string]struct {
		crd     *unstructured.Unstructured
		want    bool
		wantErr bool
	}{
		"no status yet":              {crd: crd(), want: false},
		"names accepted, not served": {crd: crd(cond("NamesAccepted", "True"), cond("Established", "False")), want: false},
		"established":                {crd: crd(cond("NamesAccepted", "True"), cond("Established", "True")), want: true},
		"names clash":                {crd: crd(cond("NamesAccepted", "False")), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := established(tc.crd)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("established = %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
			if tc.wantErr && !errors.Is(err, ErrNotEstablished) {
				t.Errorf("error %v does not wrap ErrNotEstablished", err)
			}
		})
	}
}
