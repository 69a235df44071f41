package shared

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/sharedtest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

func TestWorkName(t *testing.T) {
	web := api.TemplateRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	with := func(f func(*api.TemplateRef)) api.TemplateRef {
		r := web
		f(&r)
		return r
	}
	tests := []struct {
		name      string
		ref       api.TemplateRef
		same      bool // same name as web's
		wantStart string
	}{
		{name: "stable", ref: web, same: true, wantStart: "web-"},
		{name: "version is not part of the identity", ref: with(func(r *api.TemplateRef) { r.Version = "v2" }), same: true, wantStart: "web-"},
		{name: "another kind", ref: with(func(r *api.TemplateRef) { r.Group, r.Kind = "", "ConfigMap" }), wantStart: "web-"},
		{name: "another group", ref: with(func(r *api.TemplateRef) { r.Group = "example.com" }), wantStart: "web-"},
		{name: "another namespace", ref: with(func(r *api.TemplateRef) { r.Namespace = "prod" }), wantStart: "web-"},
		{name: "colon and capitals", ref: api.TemplateRef{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "system:Admin"}, wantStart: "system.admin-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := WorkName(tt.ref)
			if (got == WorkName(web)) != tt.same {
				t.Errorf("WorkName(%+v) = %q, WorkName(web) = %q; same = %v, want %v", tt.ref, got, WorkName(web), !tt.same, tt.same)
			}
			if !strings.HasPrefix(got, tt.wantStart) {
				t.Errorf("WorkName(%+v) = %q, want prefix %q", tt.ref, got, tt.wantStart)
			}
			if msgs := validation.IsDNS1123Subdomain(got); len(msgs) > 0 {
				t.Errorf("WorkName(%+v) = %q is not a valid name: %v", tt.ref, got, msgs)
			}
		})
	}
	long := WorkName(with(func(r *api.TemplateRef) { r.Name = strings.Repeat("a", 253) }))
	if len(long) > 253 || validation.IsDNS1123Subdomain(long) != nil {
		t.Errorf("WorkName of a 253-character name = %q (%d characters), want a valid name of at most 253", long, len(long))
	}
}

func TestClusterOfNamespace(t *testing.T) {
	tests := []struct {
		namespace string
		cluster   string
		ok        bool
	}{
		{ExecutionNamespace("east"), "east", true},
		{"flotilla-es-", "", false},
		{"karmada-es-east", "", false},
		{"default", "", false},
	}
	for _, tt := range tests {
		cluster, ok := ClusterOfNamespace(tt.namespace)
		if cluster != tt.cluster || ok != tt.ok {
			t.Errorf("clusterOfNamespace(%q) = %q, %v; want %q, %v", tt.namespace, cluster, ok, tt.cluster, tt.ok)
		}
	}
}

// work builds a Work of binding uid for cluster with one manifest.
func work(cluster, manifest string, mutate ...func(*workv1.Work)) *workv1.Work {
	w := &workv1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ExecutionNamespace(cluster), Name: "web-abc",
			Labels:      map[string]string{LabelBindingPermanentID: "uid"},
			Annotations: map[string]string{AnnotationBindingNamespace: "default", AnnotationBindingName: "web-deployment.apps", AnnotationTemplateGeneration: "1"},
			Finalizers:  []string{FinalizerExecution},
		},
		Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
	}
	for _, m := range mutate {
		m(w)
	}
	return w
}

func stored(w *workv1.Work) *workv1.Work {
	w.ResourceVersion, w.UID = "7", "work-uid"
	return w
}

func deleting(w *workv1.Work) {
	now := metav1.Now()
	w.DeletionTimestamp = &now
}

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
			desired: map[string]*workv1.Work{"b": work("b", m1), "a": work("a", m1)},
			write:   []string{"flotilla-es-a (create)", "flotilla-es-b (create)"},
		},
		{
			name:     "unchanged works are not written, even if stored with other key order",
			desired:  map[string]*workv1.Work{"a": work("a", m1)},
			existing: []workv1.Work{*stored(work("a", m1Reordered))},
		},
		{
			name:     "a changed manifest updates the stored work and keeps what others added",
			desired:  map[string]*workv1.Work{"a": work("a", m2)},
			existing: []workv1.Work{*stored(work("a", m1, func(w *workv1.Work) { w.Labels["team"] = "x"; w.Finalizers = append(w.Finalizers, "other") }))},
			write:    []string{"flotilla-es-a"},
			checkWrite: func(t *testing.T, w *workv1.Work) {
				if string(w.Spec.Workload.Manifests[0].Raw) != m2 || w.Labels["team"] != "x" || len(w.Finalizers) != 2 || w.ResourceVersion != "7" {
					t.Errorf("merged work = %+v", w)
				}
			},
		},
		{
			name:     "a changed conflict resolution updates the work",
			desired:  map[string]*workv1.Work{"a": work("a", m1, func(w *workv1.Work) { w.Annotations[AnnotationConflictResolution] = "Abort" })},
			existing: []workv1.Work{*stored(work("a", m1, func(w *workv1.Work) { w.Annotations[AnnotationConflictResolution] = "Overwrite" }))},
			write:    []string{"flotilla-es-a"},
			checkWrite: func(t *testing.T, w *workv1.Work) {
				if w.Annotations[AnnotationConflictResolution] != "Abort" {
					t.Errorf("conflict resolution = %q, want Abort", w.Annotations[AnnotationConflictResolution])
				}
			},
		},
		{
			name:     "the work of a cluster left is removed",
			desired:  map[string]*workv1.Work{"a": work("a", m1)},
			existing: []workv1.Work{*stored(work("a", m1)), *stored(work("b", m1))},
			remove:   []string{"flotilla-es-b"},
		},
		{
			name:     "a cluster under graceful eviction keeps its work, suspended",
			desired:  map[string]*workv1.Work{"a": work("a", m2)},
			existing: []workv1.Work{*stored(work("a", m2)), *stored(work("b", m1))},
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
			existing: []workv1.Work{*stored(work("b", m1, func(w *workv1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }))},
			evicting: only("b"),
			kept:     []string{"b"},
		},
		{
			name:     "a cluster scheduled again gets its work resumed",
			desired:  map[string]*workv1.Work{"b": work("b", m1)},
			existing: []workv1.Work{*stored(work("b", m1, func(w *workv1.Work) { w.Spec.SuspendDispatching = ptr.To(true) }))},
			write:    []string{"flotilla-es-b"},
		},
		{
			name:     "a desired name held by a work being deleted waits",
			desired:  map[string]*workv1.Work{"a": work("a", m1)},
			existing: []workv1.Work{*stored(work("a", m1, deleting))},
			blocked:  []string{"a"},
		},
		{
			name:     "a work of a cluster left that is being deleted is reported, not deleted again",
			existing: []workv1.Work{*stored(work("b", m1, deleting))},
			removing: []string{"flotilla-es-b"},
		},
		{
			name:     "a work outside an execution namespace is left alone",
			existing: []workv1.Work{*stored(work("b", m1, func(w *workv1.Work) { w.Namespace = "default" }))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := tt.evicting
			if ev == nil {
				ev = none
			}
			p := PlanWorks(tt.desired, tt.existing, ev)
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
	t0 := &Trusted{Conflict: api.ConflictOverwrite, Preserve: ptr.To(true)}
	works, err := render.Render(render.Input{Template: tmpl, Clusters: []render.Target{{Cluster: &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "east"}}}}, Fleet: "f"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWork(rb, works["east"], 4, t0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Namespace != "flotilla-es-east" || w.Name != WorkName(api.TemplateRefOf(tmpl)) {
		t.Errorf("work key = %s/%s", w.Namespace, w.Name)
	}
	wantAnn := map[string]string{
		AnnotationBindingNamespace: "default", AnnotationBindingName: "web-deployment.apps",
		AnnotationTemplateGeneration: "4", AnnotationConflictResolution: "Overwrite",
	}
	if diff := cmp.Diff(wantAnn, w.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if w.Labels[LabelBindingPermanentID] != "uid" || !ptr.Deref(w.Spec.PreserveResourcesOnDeletion, false) || len(w.Finalizers) != 1 {
		t.Errorf("work = %+v", w.ObjectMeta)
	}
	objs, err := Manifests(w)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetAnnotations()[render.AnnotationRenderedHash] != works["east"].Hash {
		t.Errorf("manifest does not hold the rendered object: %v", objs)
	}
	key, ok := BindingOfWork(w)
	if !ok || key.String() != "default/web-deployment.apps" {
		t.Errorf("bindingOfWork = %v, %v", key, ok)
	}
}
