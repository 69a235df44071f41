package terraform

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAccManifestDependencies: with propagate_deps, a ConfigMap the pods
// use follows the Deployment to every cluster it runs in, in the same
// apply; dropping it from dependencies removes it from the members.
func TestAccManifestDependencies(t *testing.T) {
	m := startFleet(t, "east", "west")
	config := func(deps string) string {
		return m.clusterHCL("east", "") + m.clusterHCL("west", "") + fmt.Sprintf(`
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  propagate_deps     = true
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement          = { cluster_affinity = { cluster_names = ["east", "west"] } }
}
locals {
  config = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "web-config", namespace = "shop" }
    data       = { mode = "fast" }
  }
}
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "shop" }
    spec = {
      replicas = 1
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec = { containers = [{ name = "web", image = "nginx:1.27", envFrom = [{ configMapRef = { name = "web-config" } }] }] }
      }
    }
  }
  dependencies         = %s
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.web]
}
`, deps)
	}
	configMapIn := func(want bool) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for cluster, cs := range m.clients {
				_, err := cs.CoreV1().ConfigMaps("shop").Get(context.Background(), "web-config", metav1.GetOptions{})
				switch {
				case want && err != nil:
					return fmt.Errorf("cluster %s: ConfigMap web-config: %v", cluster, err)
				case !want && !apierrors.IsNotFound(err):
					return fmt.Errorf("cluster %s: ConfigMap web-config should be gone, got err %v", cluster, err)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: config("[local.config]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("flotilla_manifest.web",
						tfjsonpath.New("dependencies_rendered").AtSliceIndex(0).AtMapKey("west"),
						jsonAt([]any{"data", "mode"}, knownvalue.StringExact("fast"))),
				}},
				Check: configMapIn(true),
			},
			{
				Config:           config("[local.config]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: config("[]"),
				Check:  configMapIn(false),
			},
		},
	})
}
