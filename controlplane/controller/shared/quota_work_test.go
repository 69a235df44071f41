package shared

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// TestValidateQuotaWork: the execution controller and the webhook accept
// only quota Works of the shape the quota controller writes.
func TestValidateQuotaWork(t *testing.T) {
	q := &policyv1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a", UID: "uid-1"}}
	q.Spec.Overall = corev1.ResourceList{"cpu": resource.MustParse("2")}
	q.Spec.StaticAssignments = []api.StaticClusterAssignment{{ClusterName: "east", Hard: q.Spec.Overall}}
	work := func(mutate func(*workv1.Work)) *workv1.Work {
		w, err := NewQuotaWork(q, "east", "test")
		if err != nil || w == nil {
			t.Fatalf("NewQuotaWork = %v, %v", w, err)
		}
		if mutate != nil {
			mutate(w)
		}
		return w
	}
	if w, _ := NewQuotaWork(q, "west", "test"); w != nil {
		t.Errorf("a Work for a cluster the quota does not assign: %+v", w)
	}
	manifest := func(raw string) func(*workv1.Work) {
		return func(w *workv1.Work) {
			w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}
		}
	}
	for _, tc := range []struct {
		desc string
		w    *workv1.Work
		want string
	}{
		{"the controller's own", work(nil), ""},
		{"another quota's ResourceQuota", work(manifest(`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"other","namespace":"team-a"}}`)), "must be the v1 ResourceQuota team-a/team-a"},
		{"a Deployment", work(manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"team-a","namespace":"team-a"}}`)), "must be the v1 ResourceQuota"},
		{"another namespace", work(manifest(`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"team-a","namespace":"kube-system"}}`)), "must be the v1 ResourceQuota"},
		{"outside an execution namespace", work(func(w *workv1.Work) { w.Namespace = "team-a" }), "metadata.namespace"},
		{"without the UID", work(func(w *workv1.Work) { delete(w.Labels, LabelQuotaID) }), LabelQuotaID},
		{"also naming a binding", work(func(w *workv1.Work) { w.Annotations[AnnotationBindingName] = "x" }), "only one"},
		{"also a namespace Work", work(func(w *workv1.Work) { w.Labels[LabelNamespaceSyncName] = "team-a" }), "only one"},
		{"under another name", work(func(w *workv1.Work) { w.Name = "team-a" }), "metadata.name"},
	} {
		errs := ValidateWork(tc.w)
		if got := errs.ToAggregate(); (got == nil) != (tc.want == "") || (got != nil && !strings.Contains(got.Error(), tc.want)) {
			t.Errorf("%s: ValidateWork = %v, want an error containing %q", tc.desc, got, tc.want)
		}
	}
}
