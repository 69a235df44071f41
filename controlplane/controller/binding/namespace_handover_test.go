package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared/worktest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

const teamA = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}`

var teamAWork = shared.WorkName(api.TemplateRef{Version: "v1", Kind: "Namespace", Name: "team-a"})

// bindingNamespaceWork is a binding's Work of Namespace team-a in cluster.
func bindingNamespaceWork(cluster string, mutate ...func(*workv1.Work)) *workv1.Work {
	return worktest.Work(cluster, teamA, append([]func(*workv1.Work){func(w *workv1.Work) { w.Name = teamAWork }}, mutate...)...)
}

// syncNamespaceWork is the namespace sync's Work of team-a in cluster.
func syncNamespaceWork(cluster string) *workv1.Work {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", UID: "ns-uid"}}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(teamA)); err != nil {
		panic(err)
	}
	w, err := shared.NewNamespaceWork(ns, render.Work{Cluster: cluster, Object: obj})
	if err != nil {
		panic(err)
	}
	return w
}

func TestPlanWorksTakesOverTheSyncsWork(t *testing.T) {
	want := bindingNamespaceWork("east", func(w *workv1.Work) {
		w.Annotations[shared.AnnotationConflictResolution] = string(api.ConflictOverwrite)
	})
	have := worktest.Stored(syncNamespaceWork("east"))
	p := planWorks(map[string]*workv1.Work{"east": want}, []workv1.Work{*have}, func(string) bool { return false })
	if len(p.Write) != 1 || len(p.Remove) != 0 {
		t.Fatalf("plan = write %d, remove %d; want the sync's Work rewritten in place, nothing removed", len(p.Write), len(p.Remove))
	}
	got := p.Write[0]
	if got.ResourceVersion != have.ResourceVersion || got.UID != have.UID {
		t.Errorf("written Work is %s/%s, want the sync's stored Work updated (%s/%s)", got.UID, got.ResourceVersion, have.UID, have.ResourceVersion)
	}
	if shared.NamespaceWork(got) || got.Labels[shared.LabelNamespaceSyncID] != "" {
		t.Errorf("labels %v: the sync's labels stay, so the Work would be both the sync's and the binding's (refused)", got.Labels)
	}
	if errs := shared.ValidateNamespaceWork(got); len(errs) == 0 {
		t.Errorf("a taken-over Work still passes as the sync's")
	}
	if key, ok := shared.BindingOfWork(got); !ok || key.Name != "web-deployment.apps" || got.Labels[shared.LabelBindingPermanentID] != "uid" ||
		got.Annotations[shared.AnnotationConflictResolution] != string(api.ConflictOverwrite) {
		t.Errorf("labels %v annotations %v: want the binding's", got.Labels, got.Annotations)
	}

	again := planWorks(map[string]*workv1.Work{"east": want}, []workv1.Work{*got}, func(string) bool { return false })
	if len(again.Write) != 0 {
		t.Errorf("a second pass over the taken-over Work writes %d, want none", len(again.Write))
	}
}

func TestSyncedNamespaceOf(t *testing.T) {
	tests := []struct {
		name string
		w    *workv1.Work
		want string
	}{
		{name: "a binding's Work of a Namespace", w: bindingNamespaceWork("east"), want: "team-a"},
		{name: "already the sync's", w: syncNamespaceWork("east")},
		{name: "being deleted", w: bindingNamespaceWork("east", worktest.Deleting)},
		{name: "another kind", w: worktest.Work("east", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"team-a","namespace":"default"}}`)},
		{name: "a Namespace of another group", w: bindingNamespaceWork("east", func(w *workv1.Work) {
			w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"example.com/v1","kind":"Namespace","metadata":{"name":"team-a"}}`)
		})},
		{name: "not the sync's Work name", w: worktest.Work("east", teamA)},
		{name: "two manifests", w: bindingNamespaceWork("east", func(w *workv1.Work) {
			w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, w.Spec.Workload.Manifests[0])
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := syncedNamespaceOf(tt.w)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("syncedNamespaceOf = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestAsSyncWork(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", UID: "ns-uid"}}
	w := worktest.Stored(bindingNamespaceWork("east", func(w *workv1.Work) {
		w.Labels["someone"] = "else"
		w.Annotations[shared.AnnotationConflictResolution] = string(api.ConflictOverwrite)
		w.Spec.SuspendDispatching, w.Spec.PreserveResourcesOnDeletion = ptr.To(true), ptr.To(true)
	}))
	got := asSyncWork(w, ns)
	if errs := shared.ValidateNamespaceWork(got); len(errs) > 0 {
		t.Fatalf("handed-back Work is not a valid sync Work: %v", errs)
	}
	if _, ok := shared.BindingOfWork(got); ok {
		t.Errorf("annotations %v: still names the binding", got.Annotations)
	}
	wantLabels := map[string]string{"someone": "else", shared.LabelNamespaceSyncName: "team-a", shared.LabelNamespaceSyncID: "ns-uid"}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	wantAnnotations := map[string]string{shared.AnnotationConflictResolution: string(api.ConflictAbort)}
	if diff := cmp.Diff(wantAnnotations, got.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if got.Spec.SuspendDispatching != nil || got.Spec.PreserveResourcesOnDeletion != nil {
		t.Errorf("spec %+v: the sync neither suspends nor preserves", got.Spec)
	}
	if got.UID != w.UID || got.ResourceVersion != w.ResourceVersion || len(got.Finalizers) != 1 {
		t.Errorf("the handed-back Work must be the same stored Work with its finalizer: %+v", got.ObjectMeta)
	}
	if w.Labels[shared.LabelBindingPermanentID] != "uid" {
		t.Errorf("asSyncWork changed its input: %v", w.Labels)
	}
}
