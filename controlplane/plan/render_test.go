package plan

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestRenderBinding: the one render step of both drivers, for a binding as
// each driver hands it over.
func TestRenderBinding(t *testing.T) {
	clusters := map[string]*api.Cluster{}
	for _, c := range eastWest() {
		clusters[c.Name] = &c
	}
	lookup := func(name string) (*api.Cluster, error) {
		if c, ok := clusters[name]; ok {
			return c, nil
		}
		return nil, errors.New("read cluster " + name + ": not found")
	}
	divided := &api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: api.ReplicaSchedulingTypeDivided}}
	two := []api.TargetCluster{{Name: "east", Replicas: 1}, {Name: "west", Replicas: 2}}
	cases := map[string]struct {
		binding api.ResourceBindingSpec
		// want is spec.replicas per rendered cluster.
		want    map[string]int64
		wantErr string
	}{
		"no clusters renders nothing":       {binding: api.ResourceBindingSpec{Placement: divided}},
		"duplicated when no placement":      {binding: api.ResourceBindingSpec{Clusters: two}, want: map[string]int64{"east": 3, "west": 3}},
		"divided by the binding's clusters": {binding: api.ResourceBindingSpec{Clusters: two, Placement: divided}, want: map[string]int64{"east": 1, "west": 2}},
		"an unknown cluster fails":          {binding: api.ResourceBindingSpec{Clusters: []api.TargetCluster{{Name: "north"}}}, wantErr: "read cluster north: not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			works, err := RenderBinding(BindingInput{
				Template: apitest.MakeLiveDeployment(3).Obj(), Binding: &tc.binding, Cluster: lookup, Fleet: "prod",
			})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("RenderBinding error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]int64
			for cluster, w := range works {
				if got == nil {
					got = map[string]int64{}
				}
				got[cluster], _, _ = unstructured.NestedInt64(w.Object.Object, "spec", "replicas")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("replicas per cluster (-want +got):\n%s", diff)
			}
		})
	}
}
