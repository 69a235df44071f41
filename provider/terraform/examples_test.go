package terraform

import (
	"os"
	"path/filepath"
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

func TestExampleProvider(t *testing.T) {
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
