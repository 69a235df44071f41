package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func testManagedView(t *testing.T, e *env) {
	e.makeNamespace(t, "view")
	ex := e.executor()
	tmpl := apitest.MakeDeployment("web", "view").Replicas(2).Obj()
	desired := rendered(t, testFleet, tmpl, "member1")["member1"]
	mustSucceed(t, ex.Apply(t.Context(), applyReq(t, tmpl, "member1")))

	missing := apitest.MakeDeployment("nothing", "view").Obj()
	obs := ex.ObserveLive(t.Context(), []ObserveRequest{{Cluster: "member1", Object: desired}, {Cluster: "member2", Object: desired}, {Cluster: "member1", Object: missing}})
	if len(obs) != 3 {
		t.Fatalf("got %d observations, want 3", len(obs))
	}
	for i, o := range obs {
		if o.Err != nil {
			t.Fatalf("observation %d: %v", i, o.Err)
		}
	}
	if !obs[1].NotFound || !obs[2].NotFound || obs[0].NotFound || !obs[0].Owned {
		t.Fatalf("found/owned: %v/%v %v %v, want the first found and owned, the others not found", !obs[0].NotFound, obs[0].Owned, !obs[1].NotFound, !obs[2].NotFound)
	}

	// Without drift the managed view is exactly what was applied: the
	// server's defaults (spec.strategy, dnsPolicy, the containers'
	// terminationMessagePath …) stay out although the live object has them.
	live := obs[0].Live
	for _, path := range [][]string{{"spec", "strategy"}, {"spec", "template", "spec", "dnsPolicy"}, {"spec", "revisionHistoryLimit"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(live.Object, path...); !found {
			t.Fatalf("live object lacks the server default %v the check relies on", path)
		}
	}
	if diff := cmp.Diff(desired.Object, obs[0].Managed.Object); diff != "" {
		t.Errorf("managed view without drift (-applied +view):\n%s", diff)
	}

	// Another manager changes replicas and the image with an update, as
	// kubectl edit does: the view shows the new values.
	live.Object["spec"].(map[string]any)["replicas"] = int64(5)
	containers := live.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	containers[0].(map[string]any)["image"] = "nginx:drift"
	if _, err := e.client("member1").Resource(deployments).Namespace("view").Update(t.Context(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	obs = ex.ObserveLive(t.Context(), []ObserveRequest{{Cluster: "member1", Object: desired}})
	if obs[0].Err != nil {
		t.Fatal(obs[0].Err)
	}
	drifted := desired.DeepCopy()
	_ = unstructured.SetNestedField(drifted.Object, int64(5), "spec", "replicas")
	wantContainers, _, _ := unstructured.NestedSlice(drifted.Object, "spec", "template", "spec", "containers")
	wantContainers[0].(map[string]any)["image"] = "nginx:drift"
	_ = unstructured.SetNestedSlice(drifted.Object, wantContainers, "spec", "template", "spec", "containers")
	if diff := cmp.Diff(drifted.Object, obs[0].Managed.Object); diff != "" {
		t.Errorf("managed view after drift (-want +view):\n%s", diff)
	}

	// The next apply takes the fields back (force), and the view is clean again.
	mustSucceed(t, ex.Apply(t.Context(), applyReq(t, tmpl, "member1")))
	obs = ex.ObserveLive(t.Context(), []ObserveRequest{{Cluster: "member1", Object: desired}})
	if diff := cmp.Diff(desired.Object, obs[0].Managed.Object); diff != "" {
		t.Errorf("managed view after re-apply (-applied +view):\n%s", diff)
	}
}
