package execution

import (
	"net/http"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestApplyCache: with Executor.Applied, applying the same object again
// onto a member object nobody changed sends no write; a change made in the
// member (or a new desired object) is applied, and the change taken back.
func TestApplyCache(t *testing.T) {
	e := startEnv(t)
	member := e.fleet.Clusters[0]
	e.makeNamespace(t, "applycache")
	var writes atomic.Int64
	target := countingTarget(t, member.RESTConfig(), func(r *http.Request) {
		if r.Method == http.MethodPatch {
			writes.Add(1)
		}
	})
	ex := &Executor{Clusters: Targets{member.Name: target}, Fleet: testFleet, Applied: NewApplyCache()}
	apply := func(v string) Outcome {
		t.Helper()
		tmpl := apitest.MakeTemplate("v1", "ConfigMap", "settings", "applycache").Set(v, "data", "v").Obj()
		res := ex.Apply(t.Context(), applyReq(t, tmpl, member.Name))
		mustSucceed(t, res)
		o, ok := res.Find(member.Name, res.Outcomes[len(res.Outcomes)-1].Object)
		if !ok || o.Action != ActionApplied || o.Live == nil {
			t.Fatalf("apply v=%s: %s", v, summary(res))
		}
		return o
	}
	live := func() string {
		t.Helper()
		v, _, _ := unstructured.NestedString(e.get(t, member.Name, configMaps, "applycache", "settings").Object, "data", "v")
		return v
	}

	first := apply("1")
	if n := writes.Load(); n != 1 || !first.Changed {
		t.Fatalf("first apply: %d writes, changed %v; want 1 write", n, first.Changed)
	}
	again := apply("1")
	if n := writes.Load(); n != 1 || again.Changed || again.ResourceVersion != first.ResourceVersion {
		t.Errorf("same object again: %d writes in all, changed %v, rv %s (was %s); want no write", n, again.Changed, again.ResourceVersion, first.ResourceVersion)
	}

	// A change by hand in the member moves the resourceVersion: taken back.
	cm := e.get(t, member.Name, configMaps, "applycache", "settings")
	cm.Object["data"] = map[string]any{"v": "by-hand"}
	if _, err := e.client(member.Name).Resource(configMaps).Namespace("applycache").Update(t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	apply("1")
	if n := writes.Load(); n != 2 || live() != "1" {
		t.Errorf("after a change by hand: %d writes in all, member v=%q; want the apply sent and v=1", n, live())
	}
	// A new desired object is applied.
	apply("2")
	if n := writes.Load(); n != 3 || live() != "2" {
		t.Errorf("new desired object: %d writes in all, member v=%q; want the apply sent and v=2", n, live())
	}
}
