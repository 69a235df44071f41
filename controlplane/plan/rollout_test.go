package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestPlanStages: a claimed workload's placed clusters are assigned to the
// claiming policy's stages (only placed ones: north is not placed), and a
// policy without a rollout plans no stages.
func TestPlanStages(t *testing.T) {
	clusters := append(eastWest(),
		*apitest.MakeCluster("south").Label("ring", "canary").Region("us-east").Ready().Obj(),
		*apitest.MakeCluster("north").Region("eu-west").Ready().Obj())
	rollout := apitest.MakeRollout().Stage("canary", apitest.MakeAffinity().Label("ring", "canary").Obj()).Gate(10, 0, 0).
		Stage("us", apitest.MakeAffinity().Names("east").Obj()).Obj()
	web := apitest.MakePropagationPolicy("web", "default").SelectName("apps/v1", "Deployment", "web").
		ClusterNames("east", "west", "south").Rollout(rollout).Obj()
	plain := apitest.MakePropagationPolicy("api", "default").SelectName("apps/v1", "Deployment", "api").Obj()
	f := Fleet{Name: "prod", Clusters: clusters, PropagationPolicies: []api.PropagationPolicy{*web, *plain}}
	results := Plan(f, []*unstructured.Unstructured{
		apitest.MakeDeployment("web", "default").Replicas(2).Obj(),
		apitest.MakeDeployment("api", "default").Replicas(2).Obj(),
	})
	if results[0].Err != nil || results[1].Err != nil {
		t.Fatal(results[0].Err, results[1].Err)
	}
	want := []policy.Stage{
		{Name: "canary", Clusters: []string{"south"}, Batches: [][]string{{"south"}}, Gate: rollout.Stages[0].Gate},
		{Name: "us", Clusters: []string{"east"}, Batches: [][]string{{"east"}}},
		{Name: api.RemainingStageName, Clusters: []string{"west"}, Batches: [][]string{{"west"}}},
	}
	if diff := cmp.Diff(want, results[0].Stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rollout, results[0].Rollout); diff != "" {
		t.Errorf("rollout (-want +got):\n%s", diff)
	}
	if results[1].Stages != nil || results[1].Rollout != nil {
		t.Errorf("a policy without a rollout plans stages: %+v", results[1].Stages)
	}
}
