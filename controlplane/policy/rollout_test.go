package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestAssignStages(t *testing.T) {
	aff := apitest.MakeAffinity
	fleet := map[string]*api.Cluster{}
	for _, c := range []*api.Cluster{
		apitest.MakeCluster("east").Label("ring", "canary").Region("us").Obj(),
		apitest.MakeCluster("west").Region("eu").Obj(),
		apitest.MakeCluster("north").Region("eu").Obj(),
		apitest.MakeCluster("south").Region("us").Obj(),
		apitest.MakeCluster("central").Region("eu").Obj(),
	} {
		fleet[c.Name] = c
	}
	all := []string{"west", "east", "south", "north", "central"}
	gate := &api.RolloutGate{BakeSeconds: 30}
	cases := map[string]struct {
		rollout   *api.RolloutStrategy
		scheduled []string
		want      []policy.Stage
		wantErr   string
	}{
		"no strategy, no stages": {scheduled: all},
		"canary by label, the rest implicit": {
			rollout:   apitest.MakeRollout().Stage("canary", aff().Label("ring", "canary").Obj()).Gate(30, 0, 0).Obj(),
			scheduled: all,
			want: []policy.Stage{
				{Name: "canary", Clusters: []string{"east"}, Batches: [][]string{{"east"}}, Gate: gate},
				{Name: api.RemainingStageName, Clusters: []string{"central", "north", "south", "west"}, Batches: [][]string{{"central", "north", "south", "west"}}},
			},
		},
		"first stage that selects wins; nil takes the rest in batches": {
			rollout: apitest.MakeRollout().
				Stage("canary", aff().Names("east", "west").Obj()).
				Stage("us", aff().Field(api.RegionField, corev1.NodeSelectorOpIn, "us").Obj()).
				Stage("rest", nil).Batch(2).Obj(),
			scheduled: all,
			want: []policy.Stage{
				{Name: "canary", Clusters: []string{"east", "west"}, Batches: [][]string{{"east", "west"}}},
				{Name: "us", Clusters: []string{"south"}, Batches: [][]string{{"south"}}},
				{Name: "rest", Clusters: []string{"central", "north"}, Batches: [][]string{{"central", "north"}}},
			},
		},
		"batches of one, uneven batches": {
			rollout:   apitest.MakeRollout().Stage("eu", aff().Field(api.RegionField, corev1.NodeSelectorOpIn, "eu").Obj()).Batch(2).Stage("rest", nil).Batch(1).Obj(),
			scheduled: all,
			want: []policy.Stage{
				{Name: "eu", Clusters: []string{"central", "north", "west"}, Batches: [][]string{{"central", "north"}, {"west"}}},
				{Name: "rest", Clusters: []string{"east", "south"}, Batches: [][]string{{"east"}, {"south"}}},
			},
		},
		"only scheduled clusters are staged; an empty stage is kept": {
			rollout:   apitest.MakeRollout().Stage("canary", aff().Names("east").Obj()).Stage("eu", aff().Names("west").Obj()).Obj(),
			scheduled: []string{"west", "south"},
			want: []policy.Stage{
				{Name: "canary", Clusters: []string{}},
				{Name: "eu", Clusters: []string{"west"}, Batches: [][]string{{"west"}}},
				{Name: api.RemainingStageName, Clusters: []string{"south"}, Batches: [][]string{{"south"}}},
			},
		},
		"duplicates in the schedule count once": {
			rollout:   apitest.MakeRollout().Stage("all", nil).Obj(),
			scheduled: []string{"west", "west", "east"},
			want:      []policy.Stage{{Name: "all", Clusters: []string{"east", "west"}, Batches: [][]string{{"east", "west"}}}},
		},
		"nothing scheduled": {
			rollout:   apitest.MakeRollout().Stage("canary", aff().Names("east").Obj()).Obj(),
			scheduled: nil,
			want:      []policy.Stage{{Name: "canary", Clusters: []string{}}},
		},
		"unknown scheduled cluster is named": {
			rollout:   apitest.MakeRollout().Stage("canary", aff().Names("east").Obj()).Obj(),
			scheduled: []string{"east", "ghost"},
			wantErr:   `rollout: scheduled cluster "ghost" is not a known cluster, so no stage can select it`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := policy.AssignStages(tc.rollout, tc.scheduled, fleet)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSteps(t *testing.T) {
	stages := []policy.Stage{
		{Name: "canary", Clusters: []string{"east"}, Batches: [][]string{{"east"}}, Gate: &api.RolloutGate{BakeSeconds: 5}},
		{Name: "empty", Clusters: []string{}},
		{Name: "rest", Clusters: []string{"a", "b", "c"}, Batches: [][]string{{"a", "b"}, {"c"}}},
	}
	steps := policy.Steps(stages)
	var got []string
	for _, s := range steps {
		got = append(got, s.String())
	}
	want := []string{"stage canary", "stage rest (batch 1 of 2)", "stage rest (batch 2 of 2)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if steps[0].Gate.BakeSeconds != 5 || steps[2].Gate != nil || !cmp.Equal(steps[2].Clusters, []string{"c"}) {
		t.Errorf("steps carry the stage's gate and the batch's clusters: %+v", steps)
	}
}
