package scheduler

import (
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestDividesByAvailability is the descheduler's guarantee: it moves the
// replicas only of placements that divide by what fits (dynamic weights,
// Aggregated), never of Duplicated or statically weighted ones.
func TestDividesByAvailability(t *testing.T) {
	rs := func(typ api.ReplicaSchedulingType, pref api.ReplicaDivisionPreference, wp *api.ClusterPreferences) *api.Placement {
		return &api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: typ, ReplicaDivisionPreference: pref, WeightPreference: wp}}
	}
	static := &api.ClusterPreferences{StaticWeightList: []api.StaticClusterWeight{{TargetCluster: api.ClusterAffinity{ClusterNames: []string{"a"}}, Weight: 1}}}
	dynamic := &api.ClusterPreferences{DynamicWeight: api.DynamicWeightByAvailableReplicas}
	cases := []struct {
		name string
		p    *api.Placement
		want bool
	}{
		{"no replicaScheduling: Duplicated", &api.Placement{}, false},
		{"Duplicated", rs(api.ReplicaSchedulingTypeDuplicated, "", dynamic), false},
		{"Divided, no preference: static weights", rs(api.ReplicaSchedulingTypeDivided, "", nil), false},
		{"Divided, Weighted, no weights", rs(api.ReplicaSchedulingTypeDivided, api.ReplicaDivisionPreferenceWeighted, nil), false},
		{"Divided, static weights", rs(api.ReplicaSchedulingTypeDivided, api.ReplicaDivisionPreferenceWeighted, static), false},
		{"Divided, dynamic weights", rs(api.ReplicaSchedulingTypeDivided, api.ReplicaDivisionPreferenceWeighted, dynamic), true},
		{"empty type, dynamic weights (Divided by default)", rs("", api.ReplicaDivisionPreferenceWeighted, dynamic), true},
		{"Divided, Aggregated", rs(api.ReplicaSchedulingTypeDivided, api.ReplicaDivisionPreferenceAggregated, nil), true},
		{"unknown dynamic weight", rs(api.ReplicaSchedulingTypeDivided, api.ReplicaDivisionPreferenceWeighted, &api.ClusterPreferences{DynamicWeight: "Other"}), false},
		{"unknown type", rs("Other", api.ReplicaDivisionPreferenceAggregated, nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := DividesByAvailability(tc.p); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
