package terraform

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// importCommandRE reads "terraform import ADDRESS FILE:REF" from import.sh.
var importCommandRE = regexp.MustCompile(`(?m)^terraform import (\S+) (\S+):(\S+)$`)

// TestExamplePolicyResources applies each policy example, checks the next
// plan is empty, and runs its import.sh against the policies.yaml beside it:
// the import must reproduce the applied state, so the YAML and the HCL say the
// same thing.
func TestExamplePolicyResources(t *testing.T) {
	t.Parallel()
	for _, k := range []policyKind{propagationPolicyKind, clusterPropagationPolicyKind, overridePolicyKind, clusterOverridePolicyKind} {
		typ := "flotilla_" + k.typeName
		t.Run(typ, func(t *testing.T) {
			dir := filepath.Join("resources", typ)
			m := importCommandRE.FindStringSubmatch(readExample(t, filepath.Join(dir, "import.sh")))
			if m == nil {
				t.Fatalf("%s/import.sh has no `terraform import ADDRESS FILE:REF` line", dir)
			}
			addr, file, ref := m[1], m[2], m[3]
			if !strings.HasPrefix(addr, typ+".") {
				t.Fatalf("import.sh imports %s, want a %s", addr, typ)
			}
			wantID := ref
			if k.namespaced && !strings.Contains(ref, "/") {
				t.Fatalf("import.sh ref %q needs a namespace", ref)
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: policyTestProviders,
				Steps: []resource.TestStep{
					{
						Config: readExample(t, filepath.Join(dir, "resource.tf")),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(wantID)),
							statecheck.ExpectKnownValue(addr, tfjsonpath.New("kind"), knownvalue.StringExact(k.kind)),
						},
					},
					{
						ResourceName:      addr,
						ImportState:       true,
						ImportStateId:     policyExamplePath(t, filepath.Join(dir, file)) + ":" + ref,
						ImportStateVerify: true,
					},
				},
			})
		})
	}
}

// policyExamplePath is the absolute path of a file under examples/.
func policyExamplePath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
