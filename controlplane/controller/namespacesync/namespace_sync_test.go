package namespacesync

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// TestSyncsNamespace follows Karmada's namespaceShouldBeSynced and the
// skip-auto-propagation label check of its namespace sync Reconcile, with
// flotilla's reserved namespaces in place of --skipped-propagating-namespaces.
func TestSyncsNamespace(t *testing.T) {
	withIstio := shared.Options{ReservedNamespaces: []string{"kube-*", shared.SystemNamespace, "istio-system"}}
	for _, tc := range []struct {
		name   string
		labels map[string]string
		opts   shared.Options
		want   bool
	}{
		{name: "team-a", want: true},
		{name: "default"},
		{name: "kube-system"},
		{name: "kube-anything"},
		{name: shared.SystemNamespace},
		{name: shared.ExecutionNamespacePrefix() + "east"},
		{name: "karmada-system"},
		{name: "karmada-cluster"},
		{name: "karmada-es-east"},
		{name: "karmada-apps", want: true},
		{name: "istio-system", want: true},
		{name: "istio-system", opts: withIstio},
		{name: "quiet", labels: map[string]string{shared.LabelSkipAutoPropagation: "true"}},
		{name: "quiet", labels: map[string]string{shared.LabelSkipAutoPropagation: "TRUE"}},
		{name: "loud", labels: map[string]string{shared.LabelSkipAutoPropagation: "false"}, want: true},
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}}
		got, why := shared.SyncsNamespace(ns, tc.opts)
		if got != tc.want || (got == (why != "")) {
			t.Errorf("SyncsNamespace(%s, labels %v) = %v, %q; want %v", tc.name, tc.labels, got, why, tc.want)
		}
	}
}

// TestValidateNamespaceWork: the execution controller and the webhook
// accept only namespace Works of the shape the sync writes.
func TestValidateNamespaceWork(t *testing.T) {
	work := func(name, manifest string, mutate func(*workv1.Work)) *workv1.Work {
		w := &workv1.Work{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: shared.ExecutionNamespace("east"),
				Name:      shared.WorkName(api.TemplateRef{Version: "v1", Kind: "Namespace", Name: name}),
				Labels:    map[string]string{shared.LabelNamespaceSyncName: name, shared.LabelNamespaceSyncID: "uid-1"},
			},
			Spec: api.WorkSpec{Workload: api.WorkloadTemplate{Manifests: []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}},
		}
		if mutate != nil {
			mutate(w)
		}
		return w
	}
	const teamA = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}`
	for _, tc := range []struct {
		desc string
		w    *workv1.Work
		want string
	}{
		{"the sync's own", work("team-a", teamA, nil), ""},
		{"another namespace's manifest", work("team-a", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-system"}}`, nil), "must be the v1 Namespace"},
		{"a ConfigMap", work("team-a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"team-a","namespace":"team-a"}}`, nil), "must be the v1 Namespace"},
		{"outside an execution namespace", work("team-a", teamA, func(w *workv1.Work) { w.Namespace = "team-a" }), "metadata.namespace"},
		{"without the UID", work("team-a", teamA, func(w *workv1.Work) { delete(w.Labels, shared.LabelNamespaceSyncID) }), shared.LabelNamespaceSyncID},
		{"also naming a binding", work("team-a", teamA, func(w *workv1.Work) { w.Annotations = map[string]string{shared.AnnotationBindingName: "x"} }), "not both"},
		{"under another name", work("team-a", teamA, func(w *workv1.Work) { w.Name = "team-a" }), "metadata.name"},
	} {
		errs := shared.ValidateWork(tc.w)
		if got := errs.ToAggregate(); (got == nil) != (tc.want == "") || (got != nil && !strings.Contains(got.Error(), tc.want)) {
			t.Errorf("%s: ValidateWork = %v, want an error containing %q", tc.desc, got, tc.want)
		}
	}
}
