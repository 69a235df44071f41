package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestQuotaResourceQuota: an assignment becomes a ResourceQuota named after
// the quota, in its namespace, with the assignment's hard limits in
// canonical form and the ownership labels of the fleet; a cluster with no
// assignment gets none; the same inputs give the same hash.
func TestQuotaResourceQuota(t *testing.T) {
	q := &api.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "team"},
		Spec: api.FederatedResourceQuotaSpec{
			Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			StaticAssignments: []api.StaticClusterAssignment{
				{ClusterName: "east", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5"), corev1.ResourcePods: resource.MustParse("10")}},
			},
		},
	}
	for _, tc := range []struct {
		cluster string
		ok      bool
		hard    map[string]any
	}{
		{cluster: "east", ok: true, hard: map[string]any{"cpu": "500m", "pods": "10"}},
		{cluster: "west"},
	} {
		w, ok, err := QuotaResourceQuota(q, tc.cluster, "prod")
		if err != nil || ok != tc.ok {
			t.Fatalf("%s: QuotaResourceQuota = %v, %v; want ok %v", tc.cluster, ok, err, tc.ok)
		}
		if !ok {
			continue
		}
		o := w.Object
		if got := api.TemplateRefOf(o).String(); got != "v1, Kind=ResourceQuota, shop/team" {
			t.Errorf("%s: object %s", tc.cluster, got)
		}
		hard, _, _ := unstructured.NestedMap(o.Object, "spec", "hard")
		if d := cmp.Diff(tc.hard, hard); d != "" {
			t.Errorf("%s: spec.hard (-want +got):\n%s", tc.cluster, d)
		}
		if o.GetLabels()[LabelFleet] != "prod" || o.GetAnnotations()[AnnotationRenderedHash] != w.Hash || w.Hash == "" {
			t.Errorf("%s: ownership labels %v, annotations %v, hash %q", tc.cluster, o.GetLabels(), o.GetAnnotations(), w.Hash)
		}
		again, _, _ := QuotaResourceQuota(q, tc.cluster, "prod")
		if again.Hash != w.Hash {
			t.Errorf("%s: hash %s then %s", tc.cluster, w.Hash, again.Hash)
		}
	}
}
