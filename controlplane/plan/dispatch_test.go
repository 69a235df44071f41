package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestPlanDispatchFields covers the policy fields a plan honours or refuses:
// suspension (honoured: clusters listed, still rendered), schedulerName and
// dependentOverrides (refused, naming the policy, the field and the reason),
// schedulePriority (no effect on a placement, as in Karmada).
func TestPlanDispatchFields(t *testing.T) {
	deploy := apitest.MakeDeployment("web", "default").Replicas(2).Obj()
	web := func() *apitest.PropagationPolicyWrapper {
		return apitest.MakePropagationPolicy("web", "default").SelectKind("apps/v1", "Deployment")
	}
	fleet := func(pp *apitest.PropagationPolicyWrapper, ops ...api.OverridePolicy) Fleet {
		return Fleet{Name: "prod", Clusters: eastWest(), PropagationPolicies: []api.PropagationPolicy{*pp.Obj()}, OverridePolicies: ops}
	}
	cases := map[string]struct {
		fleet         Fleet
		templates     []*unstructured.Unstructured
		wantSuspended []string
		wantErr       []string
		wantPlaced    int
	}{
		"no suspension dispatches everywhere": {fleet: fleet(web()), wantPlaced: 2},
		"dispatching: true holds every scheduled cluster": {
			fleet: fleet(web().SuspendAll()), wantSuspended: []string{"east", "west"}, wantPlaced: 2,
		},
		"dispatchingOnClusters holds the named scheduled clusters only": {
			fleet: fleet(web().SuspendOn("west", "gone")), wantSuspended: []string{"west"}, wantPlaced: 2,
		},
		"another scheduler is refused with the policy and field": {
			fleet:   fleet(web().SchedulerName("other")),
			wantErr: []string{"Deployment default/web", "PropagationPolicy default/web", "spec.schedulerName", `"other"`, "no other scheduler"},
		},
		"the default scheduler named explicitly is planned": {
			fleet: fleet(web().SchedulerName(api.DefaultSchedulerName)), wantPlaced: 2,
		},
		"a missing dependent override policy is refused by name": {
			fleet: fleet(web().DependentOverrides("eu", "us"), *apitest.MakeOverridePolicy("eu", "default").Obj()),
			wantErr: []string{"PropagationPolicy default/web", "spec.dependentOverrides", "OverridePolicy us in namespace default",
				"not among the override policies given"},
		},
		"present dependent override policies are planned": {
			fleet: fleet(web().DependentOverrides("eu"), *apitest.MakeOverridePolicy("eu", "default").Obj()), wantPlaced: 2,
		},
		"schedulePriority does not change a placement": {
			fleet: fleet(web().SchedulePriority("high")), wantPlaced: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rs := Plan(tc.fleet, []*unstructured.Unstructured{deploy})
			r := rs[0]
			if len(tc.wantErr) > 0 {
				var refused *RefusedFieldError
				if !errors.As(r.Err, &refused) {
					t.Fatalf("want a RefusedFieldError, got %v", r.Err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(r.Err.Error(), s) {
						t.Errorf("error %q does not say %q", r.Err, s)
					}
				}
				if len(r.Placement) != 0 || r.Works != nil {
					t.Errorf("a refused template has no placement or works: %+v", r)
				}
				return
			}
			if r.Err != nil {
				t.Fatalf("unexpected error: %v", r.Err)
			}
			if len(r.Placement) != tc.wantPlaced || len(r.Works) != tc.wantPlaced {
				t.Errorf("placement %v, %d works; want %d of each (suspended clusters are rendered too)", r.Placement, len(r.Works), tc.wantPlaced)
			}
			if diff := cmp.Diff(tc.wantSuspended, r.Suspended); diff != "" {
				t.Errorf("suspended (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanSuspensionDoesNotHoldDependencies follows Karmada: an attached
// binding carries no suspension, so a dependency is dispatched to a
// cluster its workload is held back from.
func TestPlanSuspensionDoesNotHoldDependencies(t *testing.T) {
	f := Fleet{Name: "prod", Clusters: eastWest(), PropagationPolicies: []api.PropagationPolicy{*apitest.MakePropagationPolicy("web", "default").
		SelectName("apps/v1", "Deployment", "web").PropagateDeps().SuspendOn("west").Obj()}}
	rs := Plan(f, []*unstructured.Unstructured{
		apitest.MakeConfigMap("web-config", "default").Obj(),
		apitest.MakeDeployment("web", "default").Replicas(2).
			Set([]any{map[string]any{"name": "cfg", "configMap": map[string]any{"name": "web-config"}}}, "spec", "template", "spec", "volumes").Obj(),
	})
	if diff := cmp.Diff([]string{"west"}, rs[1].Suspended); diff != "" {
		t.Errorf("workload suspended (-want +got):\n%s", diff)
	}
	if len(rs[0].Suspended) != 0 || len(rs[0].Placement) != 2 {
		t.Errorf("dependency: placement %v suspended %v; want both clusters, none held", rs[0].Placement, rs[0].Suspended)
	}
}
