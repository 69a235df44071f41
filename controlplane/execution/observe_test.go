package execution

import (
	"testing"
	"time"

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

// testReadCache observes through a ReadCache and checks that the answers
// are those of plain GETs, that one LIST serves every object of a kind and
// namespace, and that an object the list does not hold is still read.
func testReadCache(t *testing.T, e *env) {
	e.makeNamespace(t, "reads")
	ex := e.executor()
	var reqs []ObserveRequest
	for _, name := range []string{"a", "b", "c"} {
		tmpl := apitest.MakeDeployment(name, "reads").Replicas(1).Obj()
		mustSucceed(t, ex.Apply(t.Context(), applyReq(t, tmpl, "member1")))
		reqs = append(reqs, ObserveRequest{Cluster: "member1", Object: rendered(t, testFleet, tmpl, "member1")["member1"]})
	}
	missing := apitest.MakeDeployment("missing", "reads").Obj()
	reqs = append(reqs, ObserveRequest{Cluster: "member1", Object: missing})

	cached := e.executor()
	cached.Reads = NewReadCache(time.Minute)
	compare := func(step string) {
		t.Helper()
		want := ex.ObserveLive(t.Context(), reqs)
		got := cached.ObserveLive(t.Context(), reqs)
		for i := range want {
			if want[i].Err != nil || got[i].Err != nil {
				t.Fatalf("%s: %s: errors %v / %v", step, want[i].Object, want[i].Err, got[i].Err)
			}
			if got[i].NotFound != want[i].NotFound || got[i].Owned != want[i].Owned {
				t.Errorf("%s: %s: cached found/owned %v/%v, uncached %v/%v", step, want[i].Object, !got[i].NotFound, got[i].Owned, !want[i].NotFound, want[i].Owned)
				continue
			}
			if want[i].Managed != nil {
				if diff := cmp.Diff(want[i].Managed.Object, got[i].Managed.Object); diff != "" {
					t.Errorf("%s: %s: managed view (-uncached +cached):\n%s", step, want[i].Object, diff)
				}
			}
		}
	}
	compare("first read")
	if n := len(cached.Reads.lists); n != 1 {
		t.Errorf("%d lists kept after reading three Deployments of one namespace, want 1", n)
	}

	// A change made after the list is not seen until the cache is reset:
	// the list, not a GET, answered.
	live := e.get(t, "member1", deployments, "reads", "b")
	_ = unstructured.SetNestedField(live.Object, int64(4), "spec", "replicas")
	if _, err := e.client("member1").Resource(deployments).Namespace("reads").Update(t.Context(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	obs := cached.ObserveLive(t.Context(), reqs[1:2])
	if r, _, _ := unstructured.NestedInt64(obs[0].Managed.Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %d before Reset, want the listed 1", r)
	}
	cached.Reads.Reset()
	compare("after a change and Reset")

	// Labels removed (the list misses it, a GET finds it, not owned) and an
	// object deleted.
	live = e.get(t, "member1", deployments, "reads", "c")
	live.SetLabels(nil)
	if _, err := e.client("member1").Resource(deployments).Namespace("reads").Update(t.Context(), live, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := e.client("member1").Resource(deployments).Namespace("reads").Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cached.Reads.Reset()
	compare("after unlabelling c and deleting a")
	obs = cached.ObserveLive(t.Context(), reqs[:3])
	if !obs[0].NotFound || obs[2].NotFound || obs[2].Owned {
		t.Errorf("a found %v (want deleted), c found %v owned %v (want found, not owned)", !obs[0].NotFound, !obs[2].NotFound, obs[2].Owned)
	}
}
