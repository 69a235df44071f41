package engine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestCompareStages: apply refuses, as a stale plan, a rollout whose stage
// membership changed since the plan, naming each difference.
func TestCompareStages(t *testing.T) {
	t.Parallel()
	shown := []policy.Stage{{Name: "canary", Clusters: []string{"east"}}, {Name: "rest", Clusters: []string{"north", "west"}}}
	rollout := &api.RolloutStrategy{Stages: []api.RolloutStage{{Name: "canary"}, {Name: "rest"}}}
	result := func(stages ...policy.Stage) plan.Result {
		return plan.Result{Template: api.TemplateRef{Kind: "Deployment", Namespace: "default", Name: "web"}, Rollout: rollout, Stages: stages}
	}
	cases := map[string]struct {
		now  plan.Result
		want []string
	}{
		"same stages": {now: result(shown...)},
		"a cluster moved": {
			now: result(policy.Stage{Name: "canary", Clusters: []string{"east", "north"}}, policy.Stage{Name: "rest", Clusters: []string{"west"}}),
			want: []string{
				"stage canary was planned with clusters [east] and would now have [east north]",
				"stage rest was planned with clusters [north west] and would now have [west]",
			},
		},
		"a stage appeared and one went": {
			now:  result(policy.Stage{Name: "canary", Clusters: []string{"east"}}, policy.Stage{Name: api.RemainingStageName, Clusters: []string{"north", "west"}}),
			want: []string{"stage remaining was not planned", "stage rest was planned and is no longer in the rollout"},
		},
		"the rollout was removed": {
			now:  plan.Result{Template: api.TemplateRef{Kind: "Deployment", Namespace: "default", Name: "web"}},
			want: []string{"the claiming policy no longer has a rollout"},
		},
		"the template cannot be planned": {
			now:  plan.Result{Err: errors.New("no cluster fits")},
			want: []string{"no cluster fits"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := compareStages(shown, tc.now)
			var got []string
			var stale *StalePlanError
			if errors.As(err, &stale) {
				got = stale.Differences
			} else if err != nil {
				t.Fatalf("error %v is not a *StalePlanError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGateErrorMessage: a halted rollout names the stage, its clusters, why,
// and what happened to the others.
func TestGateErrorMessage(t *testing.T) {
	t.Parallel()
	err := &GateError{
		Template: "Deployment default/web",
		Step:     policy.Step{Stage: "rest", Batch: 0, Batches: 2, Clusters: []string{"north", "south"}},
		Updated:  []string{"north", "south"}, RolledBack: []string{"north"}, Pending: []string{"west"},
		Err: errors.New("timed out after 10s waiting for Deployment default/web: north: 0/1 updated replicas available"),
	}
	want := "rollout of Deployment default/web halted at stage rest (batch 1 of 2) (clusters north, south): timed out after 10s waiting for " +
		"Deployment default/web: north: 0/1 updated replicas available; rolled back to the previous rendering: north; " +
		"not started, keeping what they run: west"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err.Error(), want)
	}
}
