package terraform

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// TestExampleClusterResources applies the flotilla_cluster and
// flotilla_cluster_status examples against two real members, with the
// examples' kubeconfig path and kind contexts replaced by the test fleet's,
// and runs the import.sh command against what was applied.
func TestExampleClusterResources(t *testing.T) {
	t.Parallel()
	f, kubeconfig := startMembers(t, 2)
	local := strings.NewReplacer(
		"~/.kube/config", kubeconfig,
		"kind-east", f.Clusters[0].Name,
		"kind-west", f.Clusters[1].Name,
	).Replace

	addr, id := exampleImport(t, "resources/flotilla_cluster")
	defaultFleet := func(member string) marker { return marker{Found: true, Fleet: DefaultFleet, Member: member} }

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
		CheckDestroy: resource.ComposeTestCheckFunc(
			expectMarker(t, f.Clusters[0], marker{}),
			expectMarker(t, f.Clusters[1], marker{}),
		),
		Steps: []resource.TestStep{
			{
				Config: local(readExample(t, "resources/flotilla_cluster/resource.tf")),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("flotilla_cluster.east", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("flotilla_cluster.west", plancheck.ResourceActionCreate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeTestCheckFunc(
					expectMarker(t, f.Clusters[0], defaultFleet("east")),
					expectMarker(t, f.Clusters[1], defaultFleet("west")),
				),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     local(id),
				ImportStateVerify: true,
			},
			{
				Config: local(readExample(t, "resources/flotilla_cluster/resource.tf")) + "\n" +
					local(readExample(t, "data-sources/flotilla_cluster_status/data-source.tf")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("east_ready", knownvalue.Bool(true)),
					statecheck.ExpectKnownOutputValue("east_version", knownvalue.StringExact("v1.35.4")),
					// An API-server-only member has no nodes.
					statecheck.ExpectKnownOutputValue("east_ready_nodes", knownvalue.Int64Exact(0)),
				},
			},
		},
	})
}
