package execution

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestRetainKeepsFieldsFlotillaAppliedBefore: a field flotilla applied and
// then stops applying because a customization's retention script gives it
// to the member must stay in the member as it was, not be removed by
// server-side apply as a field its only owner dropped. The script retains
// data, which the template no longer sets at all (so the script adds it
// back from observed, and flotilla's managed fields record it only by its
// keys), and a label the template changes (a leaf it still sets).
func TestRetainKeepsFieldsFlotillaAppliedBefore(t *testing.T) {
	f := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	c := f.Clusters[0]
	cfg := c.RESTConfig()
	e := &env{fleet: f, names: []string{c.Name}, targets: Targets{c.Name: newTarget(t, cfg)}}
	e.makeNamespace(t, "app")

	tmpl := func(tier string, data map[string]any) *unstructured.Unstructured {
		u := apitest.MakeTemplate("v1", "ConfigMap", "web", "app").Obj()
		u.SetLabels(map[string]string{"tier": tier, "app": "web"})
		if data != nil {
			u.Object["data"] = data
		}
		return u
	}
	ex := e.executor()
	first := applyReq(t, tmpl("gold", map[string]any{"a": "1", "b": "2"}), c.Name)
	first.RetainMemberFields = true
	mustSucceed(t, ex.Apply(t.Context(), first))

	retaining, err := interpret.New([]api.ResourceInterpreterCustomization{{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-data"},
		Spec: api.ResourceInterpreterCustomizationSpec{
			Target: api.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Customizations: api.CustomizationRules{Retention: &api.LuaScript{LuaScript: `
function Retain(desiredObj, observedObj)
  desiredObj.data = observedObj.data
  desiredObj.metadata.labels.tier = observedObj.metadata.labels.tier
  return desiredObj
end`}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	second := applyReq(t, tmpl("silver", nil), c.Name)
	second.RetainMemberFields, second.Interpreter = true, retaining
	mustSucceed(t, ex.Apply(t.Context(), second))

	live := e.get(t, c.Name, configMaps, "app", "web")
	if live == nil {
		t.Fatal("the ConfigMap is gone from the member")
	}
	if diff := cmp.Diff(map[string]any{"a": "1", "b": "2"}, live.Object["data"]); diff != "" {
		t.Errorf("retained data changed in the member (-want +got):\n%s", diff)
	}
	if got := live.GetLabels()["tier"]; got != "gold" {
		t.Errorf("retained label tier = %q, want gold (the value flotilla applied before)", got)
	}
	if got := live.GetLabels()["app"]; got != "web" {
		t.Errorf("label app = %q, want web (not retained, still applied)", got)
	}

	// A third apply with the same request changes nothing: the fields stay
	// the member's, and flotilla no longer owns them.
	mustSucceed(t, ex.Apply(t.Context(), second))
	live = e.get(t, c.Name, configMaps, "app", "web")
	if diff := cmp.Diff(map[string]any{"a": "1", "b": "2"}, live.Object["data"]); diff != "" {
		t.Errorf("after a second retaining apply, data changed (-want +got):\n%s", diff)
	}
	owned, err := appliedFields(live, ex.fieldManager())
	if err != nil {
		t.Fatal(err)
	}
	if s := owned.String(); strings.Contains(s, ".data") || strings.Contains(s, ".tier") {
		t.Errorf("flotilla's manager still owns a retained field: %s", s)
	}
}
