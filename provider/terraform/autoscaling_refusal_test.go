package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestManifestRefusesAutoscaling: a FederatedHPA (here in Karmada's group,
// as a Karmada user writes it) scales between runs, so a flotilla_manifest
// of one is refused at plan time with a pointer to continuous mode, never
// copied to members as if it worked. The cluster points at a closed
// loopback port: nothing here may need it.
func TestManifestRefusesAutoscaling(t *testing.T) {
	const config = `
resource "flotilla_cluster" "east" {
  name  = "east"
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"
}
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  resource_selectors = [{ api_version = "autoscaling.karmada.io/v1alpha1", kind = "FederatedHPA" }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "autoscaling.karmada.io/v1alpha1"
    kind       = "FederatedHPA"
    metadata   = { name = "web", namespace = "shop" }
    spec = {
      scaleTargetRef = { apiVersion = "apps/v1", kind = "Deployment", name = "web" }
      maxReplicas    = 10
    }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.web]
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedMessage("FederatedHPA shop/web: FederatedHPA and CronFederatedHPA scale a template between runs (on the members' live metrics, or on a schedule), which only the continuous control plane does"),
		}},
	})
}
