package binding

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared/worktest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

func TestPlanWorks(t *testing.T) {
	const m1, m1Reordered, m2 = `{"kind":"Deployment","spec":{"replicas":1}}`, `{"spec":{"replicas":1},"kind":"Deployment"}`, `{"kind":"Deployment","spec":{"replicas":2}}`
	none := func(string) bool { return false }
	only := func(c string) func(string) bool { return func(x string) bool { return x == c } }
	names := func(ws []*workv1.Work) []string {
		var out []string
		for _, w := range ws {
			s := w.Namespace
			if w.ResourceVersion == "" {
				s += " (create)"
			}
			if d := w.Spec.SuspendDispatching; d != nil && *d {
				s += " (suspended)"
			}
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name                    string
		desired                 map[string]*workv1.Work
		existing                []workv1.Work
		evicting                func(string) bool
		write, remove, removing []string
		kept, blocked           []string
		checkWrite              func(t *testing.T, w *workv1.Work)
	}{
		{
			name:    "new works are created",
			desired: map[string]*workv1.Work{"b": worktest.Work("b", m1), "a": worktest.Work("a", m1)},
			write:   []string{"flotilla-es-a (create)", "flotilla-es-b (create)"},
		},
		{
			name:     "unchanged works are not written, even if stored with other key order",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m1)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m1Reordered))},
		},
		{
			name:     "a changed manifest updates the stored work and keeps what others added",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m2)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m1, func(w *workv1.Work) { w.Labels["team"] = "x"; w.Finalizers = append(w.Finalizers, "other") }))},
			write:    []string{"flotilla-es-a"},
			checkWrite: func(t *testing.T, w *workv1.Work) {
				if string(w.Spec.Workload.Manifests[0].Raw) != m2 || w.Labels["team"] != "x" || len(w.Finalizers) != 2 || w.ResourceVersion != "7" {
					t.Errorf("merged work = %+v", w)
				}
			},
		},
		{
			name:     "a changed conflict resolution updates the work",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m1, func(w *workv1.Work) { w.Annotations[shared.AnnotationConflictResolution] = "Abort" })},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m1, func(w *workv1.Work) { w.Annotations[shared.AnnotationConflictResolution] = "Overwrite" }))},
			write:    []string{"flotilla-es-a"},
			checkWrite: func(t *testing.T, w *workv1.Work) {
				if w.Annotations[shared.AnnotationConflictResolution] != "Abort" {
					t.Errorf("conflict resolution = %q, want Abort", w.Annotations[shared.AnnotationConflictResolution])
				}
			},
		},
		{
			name:     "the work of a cluster left is removed",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m1)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m1)), *worktest.Stored(worktest.Work("b", m1))},
			remove:   []string{"flotilla-es-b"},
		},
		{
			name:     "a cluster under graceful eviction keeps its worktest.Work, suspended",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m2)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m2)), *worktest.Stored(worktest.Work("b", m1))},
			evicting: only("b"),
			write:    []string{"flotilla-es-b (suspended)"},
			kept:     []string{"b"},
			checkWrite: func(t *testing.T, w *workv1.Work) {
				if string(w.Spec.Workload.Manifests[0].Raw) != m1 {
					t.Errorf("kept work's manifest changed to %s", w.Spec.Workload.Manifests[0].Raw)
				}
			},
		},
		{
			name:     "a kept work already suspended is not written",
			existing: []workv1.Work{*worktest.Stored(worktest.Work("b", m1, func(w *workv1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }))},
			evicting: only("b"),
			kept:     []string{"b"},
		},
		{
			name:     "a cluster scheduled again gets its work resumed",
			desired:  map[string]*workv1.Work{"b": worktest.Work("b", m1)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("b", m1, func(w *workv1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }))},
			write:    []string{"flotilla-es-b"},
		},
		{
			name:     "a desired name held by a work being deleted waits",
			desired:  map[string]*workv1.Work{"a": worktest.Work("a", m1)},
			existing: []workv1.Work{*worktest.Stored(worktest.Work("a", m1, worktest.Deleting))},
			blocked:  []string{"a"},
		},
		{
			name:     "a work of a cluster left that is being deleted is reported, not deleted again",
			existing: []workv1.Work{*worktest.Stored(worktest.Work("b", m1, worktest.Deleting))},
			removing: []string{"flotilla-es-b"},
		},
		{
			name:     "a work outside an execution namespace is left alone",
			existing: []workv1.Work{*worktest.Stored(worktest.Work("b", m1, func(w *workv1.Work) { w.Namespace = "default" }))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := tt.evicting
			if ev == nil {
				ev = none
			}
			p := planWorks(tt.desired, tt.existing, ev)
			got := map[string][]string{"write": names(p.Write), "remove": names(p.Remove), "removing": names(p.Removing), "kept": p.Kept, "blocked": p.blocked}
			want := map[string][]string{"write": tt.write, "remove": tt.remove, "removing": tt.removing, "kept": tt.kept, "blocked": tt.blocked}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if tt.checkWrite != nil && len(p.Write) > 0 {
				tt.checkWrite(t, p.Write[0])
			}
		})
	}
}

func TestNewWork(t *testing.T) {
	tmpl := sharedtest.DeploymentTemplate()
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment.apps", UID: "uid"}}
	// The binding's own copy is a tenant's to write: the Work takes the
	// trusted values, which say otherwise here.
	rb.Spec.ConflictResolution = api.ConflictAbort
	rb.Spec.PreserveResourcesOnDeletion = ptr.To(false)
	t0 := &shared.Trusted{Conflict: api.ConflictOverwrite, Preserve: ptr.To(true)}
	works, err := render.Render(render.Input{Template: tmpl, Clusters: []render.Target{{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "east"}}}}, Fleet: "f"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWork(rb, works["east"], 4, t0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Namespace != "flotilla-es-east" || w.Name != shared.WorkName(api.TemplateRefOf(tmpl)) {
		t.Errorf("work key = %s/%s", w.Namespace, w.Name)
	}
	wantAnn := map[string]string{
		shared.AnnotationBindingNamespace: "default", shared.AnnotationBindingName: "web-deployment.apps",
		shared.AnnotationTemplateGeneration: "4", shared.AnnotationConflictResolution: "Overwrite",
	}
	if diff := cmp.Diff(wantAnn, w.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if w.Labels[shared.LabelBindingPermanentID] != "uid" || !ptr.Deref(w.Spec.PreserveResourcesOnDeletion, false) || len(w.Finalizers) != 1 {
		t.Errorf("work = %+v", w.ObjectMeta)
	}
	objs, err := shared.Manifests(w)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetAnnotations()[render.AnnotationRenderedHash] != works["east"].Hash {
		t.Errorf("manifest does not hold the rendered object: %v", objs)
	}
	key, ok := shared.BindingOfWork(w)
	if !ok || key.String() != "default/web-deployment.apps" {
		t.Errorf("bindingOfWork = %v, %v", key, ok)
	}
}

// TestDispatchingCondition: present and False, naming the held-back
// scheduled clusters, while any is held back; removed once none is.
func TestDispatchingCondition(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	on := func(names ...string) *api.BindingSuspension {
		return &api.BindingSuspension{Suspension: api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: names}}}
	}
	var conds []metav1.Condition
	dispatchingCondition(&conds, on("b", "z"), []string{"a", "b"}, 3, now)
	c := apimeta.FindStatusCondition(conds, api.ConditionDispatching)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != api.ReasonSuspendDispatching || c.ObservedGeneration != 3 {
		t.Fatalf("condition %+v", c)
	}
	if want := "suspends dispatching to cluster b:"; !strings.Contains(c.Message, want) {
		t.Errorf("message %q does not say %q", c.Message, want)
	}
	dispatchingCondition(&conds, on("z"), []string{"a", "b"}, 4, now)
	if c := apimeta.FindStatusCondition(conds, api.ConditionDispatching); c != nil {
		t.Errorf("no scheduled cluster is held back, condition stays: %+v", c)
	}
}
