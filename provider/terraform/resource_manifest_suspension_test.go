package terraform

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// suspendedConfig is a Deployment duplicated to east and west by a policy
// with the given extra attributes (suspension, dependent_overrides).
func (m *members) suspendedConfig(policyExtra, image string) string {
	return m.clusterHCL("east", "") + m.clusterHCL("west", "") +
		policyHCL("web", "shop", "apps/v1", "Deployment", []string{"east", "west"}, policyExtra) +
		webDeployment{replicas: 1, image: image, attrs: webAttrs("east", "west")}.HCL()
}

// TestAccManifestSuspension: a policy's suspension shows in the plan
// (placement and rendered keep the held-back clusters, suspended_clusters
// names them), apply dispatches nothing to them, refresh finds no drift
// there, holding every cluster back keeps an edit out of the members, and
// lifting the suspension is a planned change that dispatches everywhere.
// A dependent_overrides entry missing from override_policies is refused.
func TestAccManifestSuspension(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	const addr = "flotilla_manifest.web"
	suspended := func(names ...string) plancheck.PlanCheck {
		if len(names) == 0 {
			return plancheck.ExpectKnownValue(addr, tfjsonpath.New("suspended_clusters"), knownvalue.Null())
		}
		checks := make([]knownvalue.Check, len(names))
		for i, n := range names {
			checks[i] = knownvalue.StringExact(n)
		}
		return plancheck.ExpectKnownValue(addr, tfjsonpath.New("suspended_clusters"), knownvalue.SetExact(checks))
	}
	both := plancheck.ExpectKnownValue(addr, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
		"east": knownvalue.Int64Exact(1), "west": knownvalue.Int64Exact(1),
	}))
	onWest := `suspension = { dispatching_on_clusters = { cluster_names = ["west"] } }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: m.suspendedConfig(onWest, "nginx:1.27"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					both, suspended("west"),
					expectRenderedImage(addr, "east", "nginx:1.27"),
					expectRenderedImage(addr, "west", "nginx:1.27"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("suspended_clusters"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("west")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("health"), knownvalue.StringExact("Healthy")),
				},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 1}, map[string]string{"east": "nginx:1.27"}),
			},
			{
				// Refresh finds nothing in west and leaves it alone: no drift.
				Config:           m.suspendedConfig(onWest, "nginx:1.27"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Every cluster held back: the edit is planned and reaches no member.
				Config: m.suspendedConfig(`suspension = { dispatching = true }`, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					both, suspended("east", "west"),
					expectRenderedImage(addr, "east", "nginx:1.28"),
				}},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 1}, map[string]string{"east": "nginx:1.27"}),
			},
			{
				Config:           m.suspendedConfig(`suspension = { dispatching = true }`, "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A dependent override policy that is not passed is refused at plan.
				Config:      m.suspendedConfig(`dependent_overrides = ["eu-registry"]`, "nginx:1.28"),
				ExpectError: regexp.MustCompile(`(?s)PropagationPolicy shop/web.*spec.dependentOverrides.*OverridePolicy\s+eu-registry`),
			},
			{
				// Lifted: a planned change that dispatches the current object everywhere.
				Config: m.suspendedConfig("", "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					both, suspended(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("status").AtMapKey("health"), knownvalue.StringExact("Healthy")),
				},
				Check: m.checkReplicas(t, "shop", "web", map[string]int32{"east": 1, "west": 1}, map[string]string{"east": "nginx:1.28", "west": "nginx:1.28"}),
			},
			{
				Config:           m.suspendedConfig("", "nginx:1.28"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			for cluster := range m.byName {
				if d := m.deployment(t, cluster, "shop", "web"); d != nil {
					return fmt.Errorf("cluster %s: deployment left behind after destroy", cluster)
				}
			}
			return nil
		},
	})
}
