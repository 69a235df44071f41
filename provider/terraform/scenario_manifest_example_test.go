package terraform

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// scenarioManifestResourceExample applies examples/resources/flotilla_manifest
// against two real members (its kubeconfig and kind contexts replaced by
// the test fleet's), checks the plan and the members, then runs its
// import.sh: the ID there must start with the id the resource records, and
// import must restore the rest of the state from the members it names.
func scenarioManifestResourceExample(t *testing.T) {
	f := startScenarioFleet(t, 2)
	const dir = "resources/flotilla_manifest"
	addr, importID := exampleImport(t, dir)
	id, _, _ := strings.Cut(importID, ";")
	src := readExample(t, dir+"/resource.tf")
	for _, s := range []string{`"~/.kube/config"`, `"kind-east"`, `"kind-west"`} {
		if !strings.Contains(src, s) {
			t.Fatalf("resource.tf should name %s, which the test replaces with the test fleet's", s)
		}
	}
	config := strings.NewReplacer(`"~/.kube/config"`, quoteHCL(f.kubeconfig), `"kind-east"`, `"member1"`, `"kind-west"`, `"member2"`).Replace(src)
	importID = strings.NewReplacer("~/.kube/config", f.kubeconfig, "kind-east", "member1", "kind-west", "member2").Replace(importID)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("placement"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.Int64Exact(1), "west": knownvalue.Int64Exact(2),
					})),
					expectRenderedImage(addr, "west", "registry.eu.example.com/nginx:1.27"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(id)),
					statecheck.ExpectKnownOutputValue("web_placement", knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.Int64Exact(1), "west": knownvalue.Int64Exact(2),
					})),
				},
				Check: f.expectDeployments("default", "web", map[string]int32{"member1": 1, "member2": 2},
					map[string]string{"member1": "nginx:1.27", "member2": "registry.eu.example.com/nginx:1.27"}),
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     importID,
				ImportStateVerify: true,
				// Import reads the object back from the members the ID names. The
				// template comes from the first of them, which runs 1 of the 3
				// divided replicas, and the timeouts block is configuration alone.
				ImportStateVerifyIgnore: []string{"manifest", "timeouts"},
			},
		},
		CheckDestroy: f.expectNoDeployment("default", "web"),
	})
}
