package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestKarmadaAdoptionCovers: an adoption covers only Karmada's object of
// the binding it names, in a cluster it names, and reads the binding's
// permanent ID under the key of the binding's kind (Karmada labels a
// ClusterResourceBinding's objects with its own key).
func TestKarmadaAdoptionCovers(t *testing.T) {
	object := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetLabels(labels)
		return u
	}
	rb := map[string]string{api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelBindingPermanentID: "id-1"}
	crb := map[string]string{api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelClusterBindingPermanentID: "id-1"}
	for _, tc := range []struct {
		name     string
		adoption *KarmadaAdoption
		cluster  string
		labels   map[string]string
		want     bool
	}{
		{"resourcebinding object", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", rb, true},
		{"clusterresourcebinding object", &KarmadaAdoption{BindingPermanentID: "id-1", ClusterBinding: true, Clusters: []string{"east"}}, "east", crb, true},
		{"clusterresourcebinding id under the resourcebinding key", &KarmadaAdoption{BindingPermanentID: "id-1", ClusterBinding: true, Clusters: []string{"east"}}, "east", rb, false},
		{"resourcebinding id under the clusterresourcebinding key", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", crb, false},
		{"other binding", &KarmadaAdoption{BindingPermanentID: "id-2", Clusters: []string{"east"}}, "east", rb, false},
		{"cluster not recorded", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"west"}}, "east", rb, false},
		{"not managed by karmada", &KarmadaAdoption{BindingPermanentID: "id-1", Clusters: []string{"east"}}, "east", map[string]string{api.KarmadaLabelBindingPermanentID: "id-1"}, false},
		{"no adoption", nil, "east", rb, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.adoption.covers(tc.cluster, object(tc.labels)); got != tc.want {
				t.Fatalf("covers = %v, want %v", got, tc.want)
			}
		})
	}
}
