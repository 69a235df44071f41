package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

func testLifecycle(t *testing.T, e *env) {
	e.makeNamespace(t, "life")
	ex := e.executor()
	tmpl := apitest.MakeDeployment("web", "life").Replicas(2).Label("tier", "web")
	all := e.names

	// First apply: created everywhere, with the ownership labels.
	res := ex.Apply(t.Context(), applyReq(t, tmpl.Obj(), all...))
	mustSucceed(t, res)
	want := []string{"member1 Deployment life/web: Applied", "member2 Deployment life/web: Applied", "member3 Deployment life/web: Applied"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("first apply (-want +got):\n%s", diff)
	}
	first := map[string]string{}
	for _, o := range res.Outcomes {
		live := e.get(t, o.Cluster, deployments, "life", "web")
		if live == nil {
			t.Fatalf("%s: Deployment missing after apply", o.Cluster)
		}
		checkOwned(t, o.Cluster, live)
		if !o.Changed || o.ResourceVersion != live.GetResourceVersion() || o.Generation != 1 || o.Hash != live.GetAnnotations()[render.AnnotationRenderedHash] {
			t.Errorf("%s: outcome %+v does not match live rv %s, generation %d", o.Cluster, o, live.GetResourceVersion(), live.GetGeneration())
		}
		first[o.Cluster] = live.GetResourceVersion()
	}

	// Unchanged: nothing is written.
	res = ex.Apply(t.Context(), applyReq(t, tmpl.Obj(), all...))
	mustSucceed(t, res)
	for _, o := range res.Outcomes {
		if o.Changed || o.ResourceVersion != first[o.Cluster] {
			t.Errorf("%s: re-apply changed the object: rv %s -> %s (changed=%v)", o.Cluster, first[o.Cluster], o.ResourceVersion, o.Changed)
		}
	}

	// Changed: updated everywhere.
	tmpl.Image("nginx:1.27")
	res = ex.Apply(t.Context(), applyReq(t, tmpl.Obj(), all...))
	mustSucceed(t, res)
	for _, c := range all {
		live := e.get(t, c, deployments, "life", "web")
		if got := containerImage(t, live); got != "nginx:1.27" || live.GetGeneration() != 2 {
			t.Errorf("%s: after the change image %q generation %d, want nginx:1.27 and 2", c, got, live.GetGeneration())
		}
	}

	// member3 leaves the placement: pruned there only.
	req := applyReq(t, tmpl.Obj(), "member1", "member2")
	req.Prune = []string{"member3"}
	res = ex.Apply(t.Context(), req)
	mustSucceed(t, res)
	want = []string{"member1 Deployment life/web: Applied", "member2 Deployment life/web: Applied", "member3 Deployment life/web: Pruned"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("prune (-want +got):\n%s", diff)
	}
	for c, wantExists := range map[string]bool{"member1": true, "member2": true, "member3": false} {
		if got := e.get(t, c, deployments, "life", "web") != nil; got != wantExists {
			t.Errorf("%s: Deployment exists = %v after pruning member3, want %v", c, got, wantExists)
		}
	}

	// Pruning again finds nothing; deleting removes the rest.
	res = ex.Apply(t.Context(), req)
	if o, _ := res.Find("member3", req.Template); o.Action != ActionAbsent {
		t.Errorf("second prune: member3 %s, want Absent", o.Action)
	}
	res = ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: all})
	mustSucceed(t, res)
	want = []string{"member1 Deployment life/web: Pruned", "member2 Deployment life/web: Pruned", "member3 Deployment life/web: Absent"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("delete (-want +got):\n%s", diff)
	}
	for _, c := range all {
		if e.get(t, c, deployments, "life", "web") != nil {
			t.Errorf("%s: Deployment still exists after Delete", c)
		}
	}
}

func testNamespaceSync(t *testing.T, e *env) {
	ex := e.executor()
	tmpl := apitest.MakeConfigMap("cfg", "fresh").Data("k", "v").Obj()
	res := ex.Apply(t.Context(), applyReq(t, tmpl, "member1", "member2"))
	mustSucceed(t, res)
	want := []string{
		"member1 Namespace fresh: CreatedNamespace", "member1 ConfigMap fresh/cfg: Applied",
		"member2 Namespace fresh: CreatedNamespace", "member2 ConfigMap fresh/cfg: Applied",
	}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("apply into a missing namespace (-want +got):\n%s", diff)
	}
	for _, c := range []string{"member1", "member2"} {
		ns := e.get(t, c, namespaces, "", "fresh")
		if ns == nil {
			t.Fatalf("%s: namespace fresh not created", c)
		}
		if got := ns.GetLabels(); got[render.LabelManagedBy] != render.ManagedByFlotilla || got[render.LabelFleet] != testFleet {
			t.Errorf("%s: created namespace labels %v, want managed-by flotilla and fleet %s", c, got, testFleet)
		}
	}
	if e.get(t, "member3", namespaces, "", "fresh") != nil {
		t.Error("member3 got the namespace though nothing was placed there")
	}

	// Existing now: no namespace outcome.
	res = ex.Apply(t.Context(), applyReq(t, tmpl, "member1", "member2"))
	mustSucceed(t, res)
	want = []string{"member1 ConfigMap fresh/cfg: Applied", "member2 ConfigMap fresh/cfg: Applied"}
	if diff := cmp.Diff(want, actions(res)); diff != "" {
		t.Fatalf("re-apply (-want +got):\n%s", diff)
	}

	// Pruning the object leaves the namespace.
	req := applyReq(t, tmpl, "member1")
	req.Prune = []string{"member2"}
	mustSucceed(t, ex.Apply(t.Context(), req))
	if e.get(t, "member2", namespaces, "", "fresh") == nil {
		t.Error("member2: pruning the ConfigMap deleted the namespace flotilla created")
	}

	// Deleting the object (a Terraform destroy) leaves the namespace too,
	// with flotilla's labels, as the manifest resource's documentation
	// says: it may hold what others put there since, which flotilla does
	// not track.
	mustSucceed(t, ex.Delete(t.Context(), DeleteRequest{Template: req.Template, Clusters: []string{"member1", "member2"}}))
	if e.get(t, "member1", configMaps, "fresh", "cfg") != nil {
		t.Error("member1: the ConfigMap is still there after Delete")
	}
	for _, c := range []string{"member1", "member2"} {
		ns := e.get(t, c, namespaces, "", "fresh")
		if ns == nil {
			t.Fatalf("%s: Delete removed the namespace flotilla created; the documentation says it stays", c)
		}
		if got := ns.GetLabels(); got[render.LabelManagedBy] != render.ManagedByFlotilla || got[render.LabelFleet] != testFleet {
			t.Errorf("%s: namespace left by Delete has labels %v, want flotilla's (documented)", c, got)
		}
	}

	// A Namespace template of the same fleet claims the namespace flotilla
	// created without a conflict.
	nsTmpl := apitest.MakeTemplate("v1", "Namespace", "fresh", "").Label("team", "a").Obj()
	res = ex.Apply(t.Context(), applyReq(t, nsTmpl, "member1"))
	mustSucceed(t, res)
	if o := res.Outcomes[0]; o.Action != ActionApplied || o.Adopted {
		t.Errorf("namespace template: %s adopted=%v, want Applied without adoption", o.Action, o.Adopted)
	}
}

// checkOwned fails unless live carries testFleet's ownership.
func checkOwned(t *testing.T, cluster string, live *unstructured.Unstructured) {
	t.Helper()
	labels, annotations := live.GetLabels(), live.GetAnnotations()
	ref := api.TemplateRefOf(live)
	if labels[render.LabelManagedBy] != render.ManagedByFlotilla || labels[render.LabelFleet] != testFleet ||
		labels[render.LabelTemplateID] != ref.ID() || annotations[render.AnnotationTemplate] != ref.String() {
		t.Errorf("%s: %s lacks the ownership labels: labels %v annotations %v", cluster, ref.Describe(), labels, annotations)
	}
}

// containerImage returns the first container's image of a Deployment.
func containerImage(t *testing.T, live *unstructured.Unstructured) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatalf("%s has no containers", live.GetName())
	}
	image, _ := containers[0].(map[string]any)["image"].(string)
	return image
}
