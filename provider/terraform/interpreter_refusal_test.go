package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestManifestRefusesInterpreterCustomization: a customization is a
// flotilla_resource_interpreter, so a flotilla_manifest whose manifest is
// one is refused at plan time, never copied to members.
// The cluster points at a closed loopback port: nothing here may need it.
func TestManifestRefusesInterpreterCustomization(t *testing.T) {
	t.Parallel()
	const config = `
resource "flotilla_cluster" "east" {
  name  = "east"
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"
}
resource "flotilla_cluster_propagation_policy" "ric" {
  name               = "ric"
  resource_selectors = [{ api_version = "config.karmada.io/v1alpha1", kind = "ResourceInterpreterCustomization" }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}
resource "flotilla_manifest" "ric" {
  manifest = {
    apiVersion = "config.karmada.io/v1alpha1"
    kind       = "ResourceInterpreterCustomization"
    metadata   = { name = "rollout" }
    spec = {
      target         = { apiVersion = "argoproj.io/v1alpha1", kind = "Rollout" }
      customizations = { healthInterpretation = { luaScript = "function InterpretHealth(obj) return true end" } }
    }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_cluster_propagation_policy.ric]
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedMessage("ResourceInterpreterCustomization rollout: a ResourceInterpreterCustomization teaches flotilla a kind and is not a template to propagate"),
		}},
	})
}
