package terraform

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// readExample returns the text of a file under examples/, relative to the repository root.
func readExample(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", rel))
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	return string(b)
}

// quotedImportRE reads "terraform import ADDRESS 'ID'" from an import.sh.
var quotedImportRE = regexp.MustCompile(`(?m)^terraform import (\S+) '([^']+)'$`)

// exampleImport returns the address and the ID of the
// `terraform import ADDRESS 'ID'` line in the import.sh of an example
// directory under examples/.
func exampleImport(t *testing.T, dir string) (addr, id string) {
	t.Helper()
	m := quotedImportRE.FindStringSubmatch(readExample(t, dir+"/import.sh"))
	if m == nil {
		t.Fatalf("%s/import.sh has no `terraform import ADDRESS 'ID'` line", dir)
	}
	return m[1], m[2]
}

func TestExampleProvider(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: readExample(t, "provider/provider.tf") + "\noutput \"ok\" { value = true }\n",
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("ok", knownvalue.Bool(true)),
			},
		}},
	})
}

func TestExampleFunctionDecodeManifests(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.RequireAbove(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: readExample(t, "functions/decode_manifests/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("manifest_keys", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("ConfigMap/web-config"), knownvalue.StringExact("Deployment/web"),
				})),
			},
		}},
	})
}

func TestProviderDefaultTimeout(t *testing.T) {
	t.Parallel()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config: `
provider "flotilla" {
  default_timeout = "ten minutes"
}
resource "flotilla_cluster_propagation_policy" "p" {
  name               = "p"
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap" }]
}
`,
			ExpectError: wrappedMessage(`"ten minutes" is not a positive Go duration`),
		}},
	})
}
