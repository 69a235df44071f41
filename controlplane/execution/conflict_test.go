package execution

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func testConflict(t *testing.T, e *env) {
	e.makeNamespace(t, "conflict")
	ex := e.executor()
	before := e.create(t, "member1", configMaps, apitest.MakeConfigMap("cfg", "conflict").Data("owner", "someone").Obj())
	tmpl := apitest.MakeConfigMap("cfg", "conflict").Data("owner", "flotilla").Obj()

	// Abort (the default): refused in member1 with the message users see,
	// applied in member2, and member1's object untouched.
	res := ex.Apply(t.Context(), applyReq(t, tmpl, "member1", "member2"))
	want := []string{"member1 ConfigMap conflict/cfg: Skipped", "member2 ConfigMap conflict/cfg: Applied"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("abort (-want +got):\n%s", diff)
	}
	wantMsg := `cluster member1: ConfigMap conflict/cfg exists and is not managed by flotilla fleet "prod"; set the propagation policy's conflictResolution (conflict_resolution in Terraform) to Overwrite to adopt it`
	if err := res.Err(); err == nil || err.Error() != wantMsg || !errors.Is(err, ErrConflict) {
		t.Errorf("abort error:\n got %v\nwant %s (and errors.Is ErrConflict)", err, wantMsg)
	}
	if after := e.get(t, "member1", configMaps, "conflict", "cfg"); after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("refused object was written: rv %s -> %s", before.GetResourceVersion(), after.GetResourceVersion())
	}

	// Overwrite: adopted, flotilla's data and labels.
	req := applyReq(t, tmpl, "member1", "member2")
	req.ConflictResolution = api.ConflictOverwrite
	res = ex.Apply(t.Context(), req)
	mustSucceed(t, res)
	if o, _ := res.Find("member1", req.Template); o.Action != ActionApplied || !o.Adopted || !o.Changed {
		t.Errorf("overwrite: member1 %s adopted=%v changed=%v, want an adopting Applied", o.Action, o.Adopted, o.Changed)
	}
	if o, _ := res.Find("member2", req.Template); o.Adopted || o.Changed {
		t.Errorf("overwrite: member2 adopted=%v changed=%v, want neither (flotilla's already)", o.Adopted, o.Changed)
	}
	adopted := e.get(t, "member1", configMaps, "conflict", "cfg")
	checkOwned(t, "member1", adopted)
	if got, _, _ := unstructured.NestedString(adopted.Object, "data", "owner"); got != "flotilla" {
		t.Errorf("adopted data owner = %q, want flotilla", got)
	}

	if adopted.GetAnnotations()[AnnotationAdopted] != "true" {
		t.Errorf("adopted object annotations = %v, want %s=true", adopted.GetAnnotations(), AnnotationAdopted)
	}
	if created := e.get(t, "member2", configMaps, "conflict", "cfg"); created.GetAnnotations()[AnnotationAdopted] != "" {
		t.Errorf("object flotilla created is marked adopted: %v", created.GetAnnotations())
	}

	// Now it is flotilla's: a plain apply (Abort) goes through, and the
	// marker stays.
	mustSucceed(t, ex.Apply(t.Context(), applyReq(t, tmpl, "member1")))
	if got := e.get(t, "member1", configMaps, "conflict", "cfg"); got.GetAnnotations()[AnnotationAdopted] != "true" {
		t.Errorf("a later apply dropped the adopted marker: %v", got.GetAnnotations())
	}

	// Deleting the template releases what was adopted and deletes what
	// flotilla created.
	res = ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: []string{"member1", "member2"}})
	mustSucceed(t, res)
	if diff := cmp.Diff([]string{"member1 ConfigMap conflict/cfg: Released", "member2 ConfigMap conflict/cfg: Pruned"}, actions(res)); diff != "" {
		t.Errorf("delete after adoption (-want +got):\n%s", diff)
	}
	released := e.get(t, "member1", configMaps, "conflict", "cfg")
	if released == nil {
		t.Fatal("member1: the adopted object was deleted, want it released")
	}
	if got, _, _ := unstructured.NestedString(released.Object, "data", "owner"); got != "flotilla" {
		t.Errorf("released object data owner = %q, want it left as applied", got)
	}
	for _, k := range ownershipLabels {
		if _, ok := released.GetLabels()[k]; ok {
			t.Errorf("released object keeps label %s", k)
		}
	}
	for _, k := range ownershipAnnotations {
		if _, ok := released.GetAnnotations()[k]; ok {
			t.Errorf("released object keeps annotation %s", k)
		}
	}
	for _, m := range released.GetManagedFields() {
		if m.Manager == DefaultFieldManager || m.Manager == DefaultFieldManager+"-adoption" {
			t.Errorf("released object keeps managedFields entry %s", m.Manager)
		}
	}
	if e.get(t, "member2", configMaps, "conflict", "cfg") != nil {
		t.Error("the object flotilla created in member2 was not deleted")
	}

	// Removal never touches an object flotilla does not own.
	e.create(t, "member1", configMaps, apitest.MakeConfigMap("foreign", "conflict").Obj())
	foreign := api.TemplateRefOf(apitest.MakeConfigMap("foreign", "conflict").Obj())
	res = ex.Delete(t.Context(), DeleteRequest{Template: foreign, Clusters: []string{"member1"}})
	mustSucceed(t, res)
	if o := res.Outcomes[0]; o.Action != ActionSkipped || o.Reason == "" {
		t.Errorf("delete of an unowned object: %s (%q), want Skipped with a reason", o.Action, o.Reason)
	}
	if e.get(t, "member1", configMaps, "conflict", "foreign") == nil {
		t.Error("Delete removed an object flotilla does not own")
	}
}

func testOtherFleet(t *testing.T, e *env) {
	e.makeNamespace(t, "fleets")
	staging := &Executor{Clusters: e.targets, Fleet: "staging"}
	tmpl := apitest.MakeConfigMap("shared", "fleets").Data("fleet", "staging").Obj()
	ref := api.TemplateRefOf(tmpl)
	mustSucceed(t, staging.Apply(t.Context(), ApplyRequest{Template: ref, Objects: rendered(t, "staging", tmpl, "member1")}))
	before := e.get(t, "member1", configMaps, "fleets", "shared")

	// Even Overwrite does not adopt across fleets.
	req := applyReq(t, apitest.MakeConfigMap("shared", "fleets").Data("fleet", "prod").Obj(), "member1")
	req.ConflictResolution = api.ConflictOverwrite
	res := e.executor().Apply(t.Context(), req)
	var conflict *ConflictError
	if o := res.Outcomes[0]; o.Action != ActionSkipped || !errors.As(o.Err, &conflict) || conflict.OtherFleet != "staging" {
		t.Fatalf("overwrite across fleets: %s %v, want Skipped with a ConflictError naming fleet staging", o.Action, o.Err)
	}
	wantMsg := `cluster member1: ConfigMap fleets/shared belongs to flotilla fleet "staging", not "prod"; flotilla never adopts objects across fleets`
	if got := res.Err().Error(); got != wantMsg {
		t.Errorf("error:\n got %s\nwant %s", got, wantMsg)
	}

	// Nor prunes them.
	res = e.executor().Delete(t.Context(), DeleteRequest{Template: ref, Clusters: []string{"member1"}})
	if o := res.Outcomes[0]; o.Action != ActionSkipped {
		t.Errorf("delete across fleets: %s, want Skipped", o.Action)
	}
	after := e.get(t, "member1", configMaps, "fleets", "shared")
	if after == nil || after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatal("prod touched staging's ConfigMap")
	}
}
