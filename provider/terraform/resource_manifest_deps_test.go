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
	t.Parallel()
	m := startFleet(t, "east", "west")
	config := func(deps string) string {
		return m.clusterHCL("east", "") + m.clusterHCL("west", "") +
			policyHCL("web", "shop", "apps/v1", "Deployment", []string{"east", "west"}, "propagate_deps = true") + `
locals {
  config = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "web-config", namespace = "shop" }
    data       = { mode = "fast" }
  }
}
` + webDeployment{
			replicas: 1, image: "nginx:1.27", container: `envFrom = [{ configMapRef = { name = "web-config" } }]`,
			attrs: "dependencies         = " + deps + "\n  " + webAttrs("east", "west"),
		}.HCL()
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
