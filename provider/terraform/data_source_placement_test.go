package terraform

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccPlacementDataSource previews placements with no apply, on one
// fleet of two members that its subtests use one after the other (each
// destroys what it registered): a weighted split, and a policy whose only
// cluster is tainted, which is reported as unschedulable with the cluster's
// reason instead of failing the run; then the data source example.
func TestAccPlacementDataSource(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	t.Run("weighted-and-tainted", func(t *testing.T) { testPlacementDataSource(t, m) })
	t.Run("example", func(t *testing.T) { testExamplePlacementDataSource(t, m) })
}

// testPlacementDataSource previews a weighted split, and a policy whose only
// cluster is tainted, reported as unschedulable with the cluster's reason.
func testPlacementDataSource(t *testing.T, m *members) {
	config := m.clusterHCL("east", `region = "us-east"`) +
		m.clusterHCL("west", `
  region = "eu-west"
  taints = [{ key = "dedicated", value = "dr", effect = "NoSchedule" }]`) + `
resource "flotilla_propagation_policy" "spread" {
  name               = "spread"
  namespace          = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    cluster_tolerations = [{ key = "dedicated", operator = "Equal", value = "dr", effect = "NoSchedule" }]
    replica_scheduling = {
      replica_scheduling_type = "Divided"
      weight_preference = { static_weight_list = [
        { target_cluster = { cluster_names = ["east"] }, weight = 2 },
        { target_cluster = { cluster_names = ["west"] }, weight = 1 },
      ] }
    }
  }
}
resource "flotilla_propagation_policy" "dr_only" {
  name               = "dr-only"
  namespace          = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "batch" }]
  placement          = { cluster_affinity = { cluster_names = ["west"] } }
}
locals {
  deployment = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "shop" }
    spec = {
      replicas = 6
      selector = { matchLabels = { app = "web" } }
      template = { metadata = { labels = { app = "web" } }, spec = { containers = [{ name = "web", image = "web:1" }] } }
    }
  }
}
data "flotilla_placement" "web" {
  manifest             = local.deployment
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.spread, flotilla_propagation_policy.dr_only]
}
data "flotilla_placement" "batch" {
  manifest             = merge(local.deployment, { metadata = { name = "batch", namespace = "shop" } })
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.spread, flotilla_propagation_policy.dr_only]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.flotilla_placement.web", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
					"east": knownvalue.Int64Exact(4), "west": knownvalue.Int64Exact(2),
				})),
				statecheck.ExpectKnownValue("data.flotilla_placement.web", tfjsonpath.New("policy"), knownvalue.StringExact("PropagationPolicy shop/spread")),
				statecheck.ExpectKnownValue("data.flotilla_placement.web", tfjsonpath.New("schedulable"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.flotilla_placement.batch", tfjsonpath.New("schedulable"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.flotilla_placement.batch", tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{})),
				statecheck.ExpectKnownValue("data.flotilla_placement.batch", tfjsonpath.New("reasons").AtMapKey("west"),
					knownvalue.StringRegexp(regexpMust(`dedicated=dr:NoSchedule`))),
			},
		}},
	})
}

// testExamplePlacementDataSource runs the data source example against two
// real members, its kubeconfig and contexts replaced by the test fleet's. It
// had a fleet of its own; it shares TestAccPlacementDataSource's, which it
// finds unregistered again.
func testExamplePlacementDataSource(t *testing.T, m *members) {
	kubeconfig := m.env.TestKubeconfig(t)
	config := strings.NewReplacer(
		"~/.kube/config", kubeconfig,
		"kind-east", m.byName["east"].Name,
		"kind-west", m.byName["west"].Name,
	).Replace(readExample(t, "data-sources/flotilla_placement/data-source.tf"))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("placement", knownvalue.MapExact(map[string]knownvalue.Check{"east": knownvalue.Int64Exact(4)})),
				statecheck.ExpectKnownOutputValue("why_not_west", knownvalue.StringRegexp(regexpMust(`untolerated taint`))),
			},
		}},
	})
}
