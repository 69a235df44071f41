package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// testForgedAdoption: an object flotilla created whose rendered copy
// carried flotilla.io/adopted=true (a front end that skipped the
// renderer's stripping, or a copy applied before it) is deleted on prune,
// not released; an object whose owner had written the annotation itself
// before flotilla adopted it is still released, as the adoption manager
// took the marker over.
func testForgedAdoption(t *testing.T, e *env) {
	e.makeNamespace(t, "forged")
	ex := e.executor()

	t.Log("a rendered copy that carries the marker is flotilla's creation: pruned")
	tmpl := apitest.MakeConfigMap("forged", "forged").Data("k", "v").Obj()
	req := applyReq(t, tmpl, "member1")
	obj := req.Objects["member1"]
	annotations := obj.GetAnnotations()
	annotations[AnnotationAdopted] = "true"
	obj.SetAnnotations(annotations)
	mustSucceed(t, ex.Apply(t.Context(), req))
	if got := e.get(t, "member1", configMaps, "forged", "forged"); got.GetAnnotations()[AnnotationAdopted] != "true" {
		t.Fatalf("setup: the applied copy lacks the forged marker: %v", got.GetAnnotations())
	}
	res := ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: []string{"member1"}})
	mustSucceed(t, res)
	if diff := cmp.Diff([]string{"member1 ConfigMap forged/forged: Pruned"}, actions(res)); diff != "" {
		t.Errorf("delete of a copy with a forged marker (-want +got):\n%s", diff)
	}
	if got := e.get(t, "member1", configMaps, "forged", "forged"); got != nil {
		t.Errorf("the copy flotilla created survived its deletion: annotations %v", got.GetAnnotations())
	}

	t.Log("an object its owner marked before flotilla adopted it: released")
	pre := apitest.MakeConfigMap("theirs", "forged").Data("owner", "someone").Obj()
	pre.SetAnnotations(map[string]string{AnnotationAdopted: "true"})
	e.create(t, "member1", configMaps, pre)
	theirs := applyReq(t, apitest.MakeConfigMap("theirs", "forged").Data("owner", "flotilla").Obj(), "member1")
	theirs.ConflictResolution = api.ConflictOverwrite
	mustSucceed(t, ex.Apply(t.Context(), theirs))
	res = ex.Delete(t.Context(), DeleteRequest{Template: theirs.Template, Clusters: []string{"member1"}})
	mustSucceed(t, res)
	if diff := cmp.Diff([]string{"member1 ConfigMap forged/theirs: Released"}, actions(res)); diff != "" {
		t.Errorf("delete of an adopted object (-want +got):\n%s", diff)
	}
	if got := e.get(t, "member1", configMaps, "forged", "theirs"); got == nil {
		t.Error("the adopted object was deleted, want it released")
	}
}
