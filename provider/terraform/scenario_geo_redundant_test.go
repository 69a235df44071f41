package terraform

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	"k8s.io/utils/ptr"
)

// geoRegions is the example's fleet: member → region.
var geoRegions = map[string]string{"member1": "us-east", "member2": "us-east", "member3": "eu-west"}

// scenarioGeoRedundant runs examples/geo-redundant: three clusters
// in two regions, spread by region with min_groups 2 (and one cluster per
// region). Both regions get replicas, in one cluster each, divided by what
// each has room for (the members are alike, so evenly), and scaling keeps
// both regions.
func scenarioGeoRedundant(t *testing.T) {
	f := startScenarioFleet(t, 3)
	const manifest = "flotilla_manifest.catalog"
	placement := func(east, west int64) plancheck.PlanCheck {
		// us-east-1 and us-east-2 tie; the lower name wins.
		return plancheck.ExpectKnownValue(manifest, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
			"us-east-1": knownvalue.Int64Exact(east), "eu-west-1": knownvalue.Int64Exact(west),
		}))
	}
	byRegion := func(east, west int64) statecheck.StateCheck {
		return statecheck.ExpectKnownOutputValue("replicas_by_region", knownvalue.MapExact(map[string]knownvalue.Check{
			"us-east": knownvalue.Int64Exact(east), "eu-west": knownvalue.Int64Exact(west),
		}))
	}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("geo-redundant"),
				ConfigVariables:          f.vars(nil),
				ConfigPlanChecks:         resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{placement(2, 2)}},
				ConfigStateChecks:        []statecheck.StateCheck{byRegion(2, 2), statecheck.ExpectKnownOutputValue("status", knownvalue.StringExact("Healthy"))},
				Check: resource.ComposeAggregateTestCheckFunc(
					f.expectDeployments("default", "catalog", map[string]int32{"member1": 2, "member3": 2}, nil),
					f.expectEveryRegion("default", "catalog", 4),
				),
			},
			{
				// Seven replicas: the odd one goes to one region, and both keep some.
				// The three new replicas are divided by room (equal) on top of
				// 2/2; the last seat is a tie that, with no template UID (a
				// Terraform template has none), goes to the first name,
				// eu-west-1, as Karmada's tieBreakerByUID does.
				ProtoV6ProviderFactories: testProviders,
				ConfigDirectory:          exampleDirectory("geo-redundant"),
				ConfigVariables:          f.vars(config.Variables{"replicas": config.IntegerVariable(7)}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(manifest, plancheck.ResourceActionUpdate),
					placement(3, 4),
				}},
				ConfigStateChecks: []statecheck.StateCheck{byRegion(3, 4)},
				Check: resource.ComposeAggregateTestCheckFunc(
					f.expectDeployments("default", "catalog", map[string]int32{"member1": 3, "member3": 4}, nil),
					f.expectEveryRegion("default", "catalog", 7),
				),
			},
		},
		CheckDestroy: f.expectNoDeployment("default", "catalog"),
	})
}

// expectEveryRegion checks with client-go, independently of the exact
// placement, what geo-redundancy promises: every region runs ready
// replicas, in one cluster per region, and they add up to total.
func (f *scenarioFleet) expectEveryRegion(namespace, name string, total int32) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ready := map[string]int32{}
		clusters := map[string]int{}
		var sum int32
		for member, region := range geoRegions {
			d, err := f.deployment(context.Background(), member, namespace, name)
			if err != nil {
				return err
			}
			if d == nil || ptr.Deref(d.Spec.Replicas, 1) == 0 {
				continue
			}
			ready[region] += d.Status.ReadyReplicas
			clusters[region]++
			sum += ptr.Deref(d.Spec.Replicas, 1)
		}
		for _, region := range []string{"us-east", "eu-west"} {
			if ready[region] == 0 {
				return fmt.Errorf("region %s runs no ready replica of %s/%s (ready by region: %v)", region, namespace, name, ready)
			}
			if clusters[region] != 1 {
				return fmt.Errorf("region %s: %s/%s runs in %d clusters, want 1", region, namespace, name, clusters[region])
			}
		}
		if sum != total {
			return fmt.Errorf("%s/%s: %d replicas across the members, want %d", namespace, name, sum, total)
		}
		return nil
	}
}
