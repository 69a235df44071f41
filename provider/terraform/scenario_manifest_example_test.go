package terraform

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// manifestImportRE reads `terraform import ADDRESS 'ID'` from import.sh.
var manifestImportRE = regexp.MustCompile(`(?m)^terraform import (\S+) '([^']+)'$`)

// TestAccScenarioManifestResourceExample applies examples/resources/flotilla_manifest
// against two real members (its kubeconfig and kind contexts replaced by
// the test fleet's), checks the plan and the members, then runs its
// import.sh: the ID there must be the id the resource records.
func TestAccScenarioManifestResourceExample(t *testing.T) {
	f := startScenarioFleet(t, 2)
	const dir = "resources/flotilla_manifest"
	m := manifestImportRE.FindStringSubmatch(readExample(t, dir+"/import.sh"))
	if m == nil {
		t.Fatalf("%s/import.sh has no `terraform import ADDRESS 'ID'` line", dir)
	}
	addr, id := m[1], m[2]
	src := readExample(t, dir+"/resource.tf")
	for _, s := range []string{`"~/.kube/config"`, `"kind-east"`, `"kind-west"`} {
		if !strings.Contains(src, s) {
			t.Fatalf("resource.tf should name %s, which the test replaces with the test fleet's", s)
		}
	}
	config := strings.NewReplacer(`"~/.kube/config"`, quoteHCL(f.kubeconfig), `"kind-east"`, `"member1"`, `"kind-west"`, `"member2"`).Replace(src)
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
				ImportStateId:     id,
				ImportStateVerify: true,
				// Import records the template's identity; the fleet comes back
				// with the next apply (see TestAccManifestLifecycle).
				ImportStateVerifyIgnore: []string{"clusters", "connections", "propagation_policies", "override_policies", "placement", "rendered",
					"policy", "affinity_term", "status", "manifest", "dependencies", "dependencies_rendered", "timeouts"},
			},
		},
		CheckDestroy: f.expectNoDeployment("default", "web"),
	})
}
