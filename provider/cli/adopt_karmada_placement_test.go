package cli

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// TestPlacementDifference: a binding is placed the same when flotilla's
// plan names Karmada's clusters with Karmada's replicas each, in any
// order; anything else, including a template flotilla cannot plan or no
// policy claims, is a difference that names both placements.
func TestPlacementDifference(t *testing.T) {
	claimed := &plan.PolicyRef{Kind: api.KindPropagationPolicy, Namespace: "default", Name: "app"}
	tc := func(name string, replicas int32) api.TargetCluster {
		return api.TargetCluster{Name: name, Replicas: replicas}
	}
	for _, c := range []struct {
		name    string
		karmada []api.TargetCluster
		result  plan.Result
		want    string
	}{
		{"same, other order", []api.TargetCluster{tc("member2", 2), tc("member1", 1)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 1), tc("member2", 2)}}, ""},
		{"same clusters, no replicas (a ConfigMap)", []api.TargetCluster{tc("member1", 0), tc("member2", 0)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 0), tc("member2", 0)}}, ""},
		{"other replicas per cluster", []api.TargetCluster{tc("member1", 1), tc("member2", 2)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 2), tc("member2", 1)}},
			"flotilla would place member1=2,member2=1; Karmada placed member1=1,member2=2 (a rollout after the take-over)"},
		{"one more cluster", []api.TargetCluster{tc("member1", 3)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 3), tc("member2", 3)}},
			"flotilla would place member1=3,member2=3; Karmada placed member1=3 (a rollout after the take-over)"},
		{"one cluster less", []api.TargetCluster{tc("member1", 0), tc("member2", 0)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member2", 0)}},
			"flotilla would place member2; Karmada placed member1,member2 (a rollout after the take-over)"},
		{"another cluster, same count", []api.TargetCluster{tc("member1", 2)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member3", 2)}},
			"flotilla would place member3=2; Karmada placed member1=2 (a rollout after the take-over)"},
		{"a cluster listed twice by Karmada", []api.TargetCluster{tc("member1", 1), tc("member1", 1)},
			plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 1), tc("member2", 1)}},
			"flotilla would place member1=1,member2=1; Karmada placed member1=1,member1=1 (a rollout after the take-over)"},
		{"not claimed", []api.TargetCluster{tc("member1", 2)}, plan.Result{},
			"flotilla would place it nowhere: no propagation policy claims the template, so the control plane would delete the binding; Karmada placed member1=2 (a deletion after the take-over)"},
		{"a dependency following its workload", []api.TargetCluster{tc("member1", 0)},
			plan.Result{RequiredBy: []api.TemplateRef{{Kind: "Deployment", Namespace: "default", Name: "web"}}, Placement: []api.TargetCluster{tc("member1", 0)}}, ""},
		{"not plannable", []api.TargetCluster{tc("member1", 2)}, plan.Result{Policy: claimed, Err: errors.New("no cluster fits")},
			"flotilla could not plan it (no cluster fits); Karmada placed member1=2 (what the control plane places after the take-over is unknown)"},
		{"Karmada placed nothing", nil, plan.Result{Policy: claimed, Placement: []api.TargetCluster{tc("member1", 2)}},
			"flotilla would place member1=2; Karmada placed no cluster (a rollout after the take-over)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := placementDifference(c.karmada, c.result); got != c.want {
				t.Errorf("placementDifference =\n  %q\nwant\n  %q", got, c.want)
			}
		})
	}
}

// TestPlacementDifferenceOfPlans runs the planner as the survey does, with
// Karmada's binding as the previous result: static weights divide by
// themselves, whatever Karmada wrote, so a binding whose weights changed
// while Karmada's scheduler was stopped is flagged; a Duplicated binding
// keeps Karmada's clusters.
func TestPlacementDifferenceOfPlans(t *testing.T) {
	clusters := []api.Cluster{*apitest.MakeCluster("member1").Ready().Obj(), *apitest.MakeCluster("member2").Ready().Obj()}
	tmpl := apitest.MakeDeployment("api", "default").Replicas(3).Image("registry.example/api:1.0").Obj()
	binding := func(placed ...api.TargetCluster) api.ResourceBinding {
		var rb api.ResourceBinding
		rb.Namespace, rb.Name = "default", "api-deployment"
		rb.Spec.Resource = api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "api"}
		rb.Spec.Replicas, rb.Spec.Clusters = 3, placed
		return rb
	}
	for _, c := range []struct {
		name    string
		policy  *apitest.PropagationPolicyWrapper
		karmada []api.TargetCluster
		want    string
	}{
		{"weights 1:2, Karmada placed 2:1", apitest.MakePropagationPolicy("split", "default").SelectName("apps/v1", "Deployment", "api").
			ClusterNames("member1", "member2").Divided(api.ReplicaDivisionPreferenceWeighted).Weight(1, "member1").Weight(2, "member2"),
			[]api.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 1}},
			"flotilla would place member1=1,member2=2; Karmada placed member1=2,member2=1 (a rollout after the take-over)"},
		{"weights 1:2, Karmada placed 1:2", apitest.MakePropagationPolicy("split", "default").SelectName("apps/v1", "Deployment", "api").
			ClusterNames("member1", "member2").Divided(api.ReplicaDivisionPreferenceWeighted).Weight(1, "member1").Weight(2, "member2"),
			[]api.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 2}}, ""},
		{"duplicated on both", apitest.MakePropagationPolicy("app", "default").SelectName("apps/v1", "Deployment", "api").ClusterNames("member1", "member2"),
			[]api.TargetCluster{{Name: "member1", Replicas: 3}, {Name: "member2", Replicas: 3}}, ""},
		{"duplicated, Karmada kept one cluster", apitest.MakePropagationPolicy("app", "default").SelectName("apps/v1", "Deployment", "api").ClusterNames("member1", "member2"),
			[]api.TargetCluster{{Name: "member1", Replicas: 3}},
			"flotilla would place member1=3,member2=3; Karmada placed member1=3 (a rollout after the take-over)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := plan.Fleet{Name: "default", Clusters: clusters, PropagationPolicies: []api.PropagationPolicy{*c.policy.Obj()}, Bindings: []api.ResourceBinding{binding(c.karmada...)}}
			r := plan.Plan(f, []*unstructured.Unstructured{tmpl})[0]
			if got := placementDifference(c.karmada, r); got != c.want {
				t.Errorf("placementDifference =\n  %q\nwant\n  %q", got, c.want)
			}
		})
	}
}
