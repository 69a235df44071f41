package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

func eastWest() []api.Cluster {
	return []api.Cluster{
		*apitest.MakeCluster("east").Region("us-east").Ready().Obj(),
		*apitest.MakeCluster("west").Region("eu-west").Ready().Obj(),
	}
}

func image(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatalf("no containers in %s", obj.GetName())
	}
	return containers[0].(map[string]any)["image"].(string)
}

func placementOf(r Result) map[string]int32 {
	out := map[string]int32{}
	for _, tc := range r.Placement {
		out[tc.Name] = tc.Replicas
	}
	return out
}

func TestPlanWeightedWithRegionalImage(t *testing.T) {
	f := Fleet{
		Name:     "prod",
		Clusters: eastWest(),
		PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
			SelectName("apps/v1", "Deployment", "web").ClusterNames("east", "west").
			Divided(api.ReplicaDivisionPreferenceWeighted).Weight(1, "east").Weight(2, "west").Obj()},
		OverridePolicies: []api.OverridePolicy{*apitest.MakeOverridePolicy("eu-registry", "default").
			SelectKind("apps/v1", "Deployment").
			Image(apitest.MakeAffinity().Names("west").Obj(), api.Registry, api.OverriderOpReplace, "registry.eu.example.com").Obj()},
	}
	tmpl := apitest.MakeDeployment("web", "default").Replicas(3).Image("nginx:1.27").Obj()
	results := Plan(f, []*unstructured.Unstructured{tmpl})
	if len(results) != 1 {
		t.Fatalf("want 1 result, got %d", len(results))
	}
	r := results[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if diff := cmp.Diff(map[string]int32{"east": 1, "west": 2}, placementOf(r)); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web"}, r.Policy); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	if got := image(t, r.Works["east"].Object); got != "nginx:1.27" {
		t.Errorf("east image: %s", got)
	}
	if got := image(t, r.Works["west"].Object); got != "registry.eu.example.com/nginx:1.27" {
		t.Errorf("west image: %s", got)
	}
	for cluster, want := range map[string]int64{"east": 1, "west": 2} {
		got, _, _ := unstructured.NestedInt64(r.Works[cluster].Object.Object, "spec", "replicas")
		if got != want {
			t.Errorf("%s rendered replicas: want %d, got %d", cluster, want, got)
		}
		if fleet := r.Works[cluster].Object.GetLabels()["flotilla.io/fleet"]; fleet != "prod" {
			t.Errorf("%s fleet label: %q", cluster, fleet)
		}
	}
	if tmpl.Object["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("Plan must not modify the template")
	}
	again := Plan(f, []*unstructured.Unstructured{tmpl})[0]
	if again.Works["west"].Hash != r.Works["west"].Hash {
		t.Errorf("planning twice must give the same rendered hash")
	}
}

func TestPlanOutcomes(t *testing.T) {
	deploy := apitest.MakeDeployment("web", "default").Replicas(3).Obj()
	cases := map[string]struct {
		fleet     Fleet
		templates []*unstructured.Unstructured
		check     func(t *testing.T, rs []Result)
	}{
		"unclaimed template has an empty placement and no error": {
			fleet:     Fleet{Name: "prod", Clusters: eastWest()},
			templates: []*unstructured.Unstructured{deploy},
			check: func(t *testing.T, rs []Result) {
				if rs[0].Policy != nil || rs[0].Err != nil || len(rs[0].Placement) != 0 || rs[0].Works != nil {
					t.Errorf("got %+v", rs[0])
				}
			},
		},
		"untolerated taint gives a fit error with a reason per cluster": {
			fleet: Fleet{
				Name:                "prod",
				Clusters:            []api.Cluster{*apitest.MakeCluster("dr").Taint("dedicated", "dr", corev1.TaintEffectNoSchedule).Obj()},
				PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").SelectKind("apps/v1", "Deployment").Obj()},
			},
			templates: []*unstructured.Unstructured{deploy},
			check: func(t *testing.T, rs []Result) {
				var fit *scheduler.FitError
				if !errors.As(rs[0].Err, &fit) {
					t.Fatalf("want a FitError, got %v", rs[0].Err)
				}
				if !strings.Contains(rs[0].Reasons["dr"], "dedicated=dr:NoSchedule") {
					t.Errorf("reason for dr: %q", rs[0].Reasons["dr"])
				}
				if len(rs[0].Placement) != 0 {
					t.Errorf("an unschedulable template has no placement")
				}
			},
		},
		"previous binding keeps an unchanged dynamic-weight placement": {
			fleet: Fleet{
				Name: "prod",
				Clusters: []api.Cluster{
					*apitest.MakeCluster("east").Allocatable(corev1.ResourcePods, "100").Ready().Obj(),
					*apitest.MakeCluster("west").Allocatable(corev1.ResourcePods, "100").Ready().Obj(),
				},
				PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
					SelectKind("apps/v1", "Deployment").Divided(api.ReplicaDivisionPreferenceWeighted).DynamicWeight().Obj()},
				Bindings: []api.ResourceBinding{{Spec: api.ResourceBindingSpec{
					Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
					Replicas: 3,
					Clusters: []api.TargetCluster{{Name: "east", Replicas: 2}, {Name: "west", Replicas: 1}},
				}}},
			},
			templates: []*unstructured.Unstructured{deploy},
			check: func(t *testing.T, rs []Result) {
				if diff := cmp.Diff(map[string]int32{"east": 2, "west": 1}, placementOf(rs[0])); diff != "" {
					t.Errorf("placement (-want +got):\n%s", diff)
				}
			},
		},
		"propagateDeps: a referenced ConfigMap follows, an unreferenced one does not": {
			fleet: Fleet{
				Name:     "prod",
				Clusters: eastWest(),
				PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
					SelectName("apps/v1", "Deployment", "web").ClusterNames("west").PropagateDeps().Obj()},
			},
			templates: []*unstructured.Unstructured{
				apitest.MakeConfigMap("web-config", "default").Data("a", "b").Obj(),
				apitest.MakeConfigMap("other", "default").Obj(),
				apitest.MakeDeployment("web", "default").Replicas(2).
					Set([]any{map[string]any{"name": "cfg", "configMap": map[string]any{"name": "web-config"}}}, "spec", "template", "spec", "volumes").Obj(),
			},
			check: func(t *testing.T, rs []Result) {
				if diff := cmp.Diff(map[string]int32{"west": 0}, placementOf(rs[0])); diff != "" {
					t.Errorf("web-config placement (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]api.TemplateRef{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "default", Name: "web"}}, rs[0].RequiredBy); diff != "" {
					t.Errorf("requiredBy (-want +got):\n%s", diff)
				}
				if _, ok := rs[0].Works["west"]; !ok {
					t.Errorf("web-config is not rendered for west")
				}
				if len(rs[1].Placement) != 0 {
					t.Errorf("an unreferenced ConfigMap must not follow: %v", rs[1].Placement)
				}
			},
		},
		"the previous claim is sticky; preemption Always takes it": {
			fleet: func() Fleet {
				pp := apitest.MakePropagationPolicy
				prev := api.ResourceBinding{Spec: api.ResourceBindingSpec{
					Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
					Clusters: []api.TargetCluster{{Name: "east", Replicas: 3}},
				}}
				prevAPI := *prev.DeepCopy()
				prevAPI.Spec.Resource.Name = "api"
				policy.SetBindingClaim(&prev, policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "low"}, "default")
				policy.SetBindingClaim(&prevAPI, policy.ClaimRef{Kind: api.KindPropagationPolicy, Name: "low"}, "default")
				return Fleet{
					Name:     "prod",
					Clusters: eastWest(),
					PropagationPolicies: []api.PropagationPolicy{
						*pp("low", "default").SelectKind("apps/v1", "Deployment").ClusterNames("east").Obj(),
						*pp("high", "default").SelectKind("apps/v1", "Deployment").ClusterNames("west").Priority(5).Obj(),
						*pp("urgent", "default").SelectName("apps/v1", "Deployment", "api").ClusterNames("west").Priority(9).Preemption(api.PreemptAlways).Obj(),
					},
					Bindings: []api.ResourceBinding{prev, prevAPI},
				}
			}(),
			templates: []*unstructured.Unstructured{deploy, apitest.MakeDeployment("api", "default").Replicas(3).Obj(), apitest.MakeDeployment("new", "default").Replicas(1).Obj()},
			check: func(t *testing.T, rs []Result) {
				want := []string{"PropagationPolicy default/low", "PropagationPolicy default/urgent", "PropagationPolicy default/high"}
				var got []string
				for _, r := range rs {
					got = append(got, r.Policy.String())
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("claims of web (held), api (preempted), new (unclaimed before) (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]int32{"east": 3}, placementOf(rs[0])); diff != "" {
					t.Errorf("web placement (-want +got):\n%s", diff)
				}
			},
		},
		"a previous binding under failover renders the preserved state into the new cluster": {
			fleet: Fleet{
				Name:     "prod",
				Clusters: eastWest(),
				PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
					SelectKind("apps/v1", "Deployment").ClusterNames("east", "west").Obj()},
				Bindings: []api.ResourceBinding{{Spec: api.ResourceBindingSpec{
					Resource: api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
					Clusters: []api.TargetCluster{{Name: "west", Replicas: 3}},
					GracefulEvictionTasks: []api.GracefulEvictionTask{{FromCluster: "east", PurgeMode: api.PurgeModeDirectly,
						PreservedLabelState: map[string]string{"job-id": "42"}, ClustersBeforeFailover: []string{"east"}}},
				}}},
			},
			templates: []*unstructured.Unstructured{deploy},
			check: func(t *testing.T, rs []Result) {
				if diff := cmp.Diff(map[string]int32{"west": 3}, placementOf(rs[0])); diff != "" {
					t.Fatalf("placement (-want +got):\n%s", diff)
				}
				if got := rs[0].Works["west"].Object.GetLabels()["job-id"]; got != "42" {
					t.Errorf("west's object has job-id %q, want the preserved 42", got)
				}
			},
		},
		"a bad template is an error for that template only": {
			fleet: Fleet{
				Name:                "prod",
				Clusters:            eastWest(),
				PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("all", "default").SelectKind("apps/v1", "Deployment").Obj()},
			},
			templates: []*unstructured.Unstructured{
				apitest.MakeDeployment("bad", "default").Set("x", "spec", "replicas").Obj(),
				apitest.MakeDeployment("good", "default").Replicas(1).Obj(),
			},
			check: func(t *testing.T, rs []Result) {
				if rs[0].Err == nil || !strings.Contains(rs[0].Err.Error(), "Deployment default/bad: spec.replicas") {
					t.Errorf("want an error naming the template and field, got %v", rs[0].Err)
				}
				if rs[1].Err != nil || len(rs[1].Placement) != 2 {
					t.Errorf("the good template must still be planned: %+v", rs[1])
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.check(t, Plan(tc.fleet, tc.templates))
		})
	}
}
