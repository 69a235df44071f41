package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

const remoteDRManifest = "flotilla_manifest.payments"

// remoteDRMaintenance takes the primary out of service through the
// example's variable.
var remoteDRMaintenance = config.Variables{"primary_taints": config.ListVariable(config.ObjectVariable(map[string]config.Variable{
	"key":    config.StringVariable("flotilla.io/maintenance"),
	"effect": config.StringVariable("NoExecute"),
}))}

// remoteDRPlacement checks the planned placement and affinity term.
func remoteDRPlacement(cluster, term string) []plancheck.PlanCheck {
	return []plancheck.PlanCheck{
		plancheck.ExpectKnownValue(remoteDRManifest, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
			cluster: knownvalue.Int64Exact(3),
		})),
		plancheck.ExpectKnownValue(remoteDRManifest, tfjsonpath.New("affinity_term"), knownvalue.StringExact(term)),
	}
}

// scenarioRemoteDR runs examples/remote-dr: payments runs in the
// primary (member1). Tainting the primary NoExecute through the example's
// variable makes the plan move every replica to the DR cluster (member2),
// which only this policy tolerates; apply moves them, and they run there.
func scenarioRemoteDR(t *testing.T) {
	f := startScenarioFleet(t, 2)
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("remote-dr"),
				ConfigVariables:          f.vars(nil),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: append(remoteDRPlacement("primary", "primary"),
						plancheck.ExpectResourceAction(remoteDRManifest, plancheck.ResourceActionCreate)),
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("affinity_term", knownvalue.StringExact("primary")),
					statecheck.ExpectKnownOutputValue("status", knownvalue.StringExact("Healthy")),
				},
				Check: f.expectDeployments("default", "payments", map[string]int32{"member1": 3}, nil),
			},
			{
				// The primary goes into maintenance: the plan shows the
				// taint and the whole app moving to DR before anything moves.
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("remote-dr"),
				ConfigVariables:          f.vars(remoteDRMaintenance),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: append(remoteDRPlacement("dr", "dr"),
						plancheck.ExpectResourceAction("flotilla_cluster.primary", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(remoteDRManifest, plancheck.ResourceActionUpdate)),
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("affinity_term", knownvalue.StringExact("dr")),
					statecheck.ExpectKnownValue(remoteDRManifest, tfjsonpath.New("status").AtMapKey("aggregated").AtMapKey("readyReplicas"), knownvalue.Int64Exact(3)),
				},
				Check: f.expectDeployments("default", "payments", map[string]int32{"member2": 3}, nil),
			},
		},
		CheckDestroy: f.expectNoDeployment("default", "payments"),
	})
}

// scenarioRemoteDRUnreachable: the primary's apiserver stops. The
// plan treats it as Karmada's taint manager would (unreachable, NoExecute)
// and moves the app to DR; apply starts it there but cannot prune the
// primary, and says so. When the primary answers again, the operator keeps
// it in maintenance (the taint variable) until failing back is decided; that
// apply prunes the copy left in the primary, and destroy cleans up
// everywhere.
func scenarioRemoteDRUnreachable(t *testing.T) {
	f := startScenarioFleet(t, 2)
	primary := f.env.Clusters[0]
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("remote-dr"),
				ConfigVariables:          f.vars(nil),
				ConfigPlanChecks:         resource.ConfigPlanChecks{PreApply: remoteDRPlacement("primary", "primary")},
				Check:                    f.expectDeployments("default", "payments", map[string]int32{"member1": 3}, nil),
			},
			{
				PreConfig:                primary.StopAPIServer,
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("remote-dr"),
				ConfigVariables:          f.vars(nil),
				ConfigPlanChecks:         resource.ConfigPlanChecks{PreApply: remoteDRPlacement("dr", "dr")},
				// DR is applied; pruning the unreachable primary fails, by name.
				ExpectError: wrappedMessage("primary: Failed: prune Deployment default/payments from cluster primary"),
			},
			{
				PreConfig: func() {
					// The app runs in DR while the primary is still down (the
					// failed apply did not wait for the rollout).
					f.waitReady(t, "member2", "default", "payments", 3)
					if err := primary.StartAPIServer(t.Context()); err != nil {
						t.Fatal(err)
					}
				},
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("remote-dr"),
				ConfigVariables:          f.vars(remoteDRMaintenance),
				ConfigPlanChecks:         resource.ConfigPlanChecks{PreApply: remoteDRPlacement("dr", "dr")},
				Check:                    f.expectDeployments("default", "payments", map[string]int32{"member2": 3}, nil),
			},
		},
		CheckDestroy: f.expectNoDeployment("default", "payments"),
	})
}
