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

// scenarioActiveActive runs examples/active-active: east (member1)
// and west (member2) both serve web, its replicas divided by static
// weights, the Service in both, and west pulling from its regional
// registry. Changing the weights and the image shows the per-cluster moves
// and images in the plan, and the members follow.
func scenarioActiveActive(t *testing.T) {
	f := startScenarioFleet(t, 2)
	const (
		deployment = "flotilla_manifest.web"
		service    = "flotilla_manifest.web_service"
	)
	placement := func(east, west int64) plancheck.PlanCheck {
		return plancheck.ExpectKnownValue(deployment, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
			"east": knownvalue.Int64Exact(east), "west": knownvalue.Int64Exact(west),
		}))
	}
	image := func(cluster, want string) plancheck.PlanCheck {
		return expectRenderedImage(deployment, cluster, want)
	}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("active-active"),
				ConfigVariables:          f.vars(nil),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(deployment, plancheck.ResourceActionCreate),
					placement(1, 2),
					image("east", "nginx:1.27"),
					image("west", "registry.eu.example.com/nginx:1.27"),
					// A Service has no replicas: each selected cluster gets one.
					plancheck.ExpectKnownValue(service, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.Int64Exact(0), "west": knownvalue.Int64Exact(0),
					})),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("placement", knownvalue.MapExact(map[string]knownvalue.Check{
						"Deployment/web": knownvalue.MapExact(map[string]knownvalue.Check{"east": knownvalue.Int64Exact(1), "west": knownvalue.Int64Exact(2)}),
						"Service/web":    knownvalue.MapExact(map[string]knownvalue.Check{"east": knownvalue.Int64Exact(0), "west": knownvalue.Int64Exact(0)}),
					})),
					statecheck.ExpectKnownOutputValue("status", knownvalue.MapExact(map[string]knownvalue.Check{
						"Deployment/web": knownvalue.StringExact("Healthy"), "Service/web": knownvalue.StringExact("Healthy"),
					})),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					f.expectDeployments("default", "web", map[string]int32{"member1": 1, "member2": 2},
						map[string]string{"member1": "nginx:1.27", "member2": "registry.eu.example.com/nginx:1.27"}),
					f.expectService("default", "web", "member1", "member2"),
				),
			},
			{
				// Plan before rollout: east takes two thirds and a new image
				// goes out; west keeps its registry.
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("active-active"),
				ConfigVariables: f.vars(config.Variables{
					"east_weight": config.IntegerVariable(2),
					"west_weight": config.IntegerVariable(1),
					"image":       config.StringVariable("nginx:1.28"),
				}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(deployment, plancheck.ResourceActionUpdate),
					placement(2, 1),
					image("east", "nginx:1.28"),
					image("west", "registry.eu.example.com/nginx:1.28"),
				}},
				Check: f.expectDeployments("default", "web", map[string]int32{"member1": 2, "member2": 1},
					map[string]string{"member1": "nginx:1.28", "member2": "registry.eu.example.com/nginx:1.28"}),
			},
			{
				// East out of service: every replica moves to west, and
				// east's Deployment and Service are removed.
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("active-active"),
				ConfigVariables: f.vars(config.Variables{
					"east_serving": config.BoolVariable(false),
					"image":        config.StringVariable("nginx:1.28"),
				}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(deployment, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"west": knownvalue.Int64Exact(3),
					})),
					plancheck.ExpectKnownValue(service, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"west": knownvalue.Int64Exact(0),
					})),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					f.expectDeployments("default", "web", map[string]int32{"member2": 3}, nil),
					f.expectService("default", "web", "member2"),
				),
			},
		},
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			f.expectNoDeployment("default", "web"),
			f.expectService("default", "web"),
		),
	})
}
