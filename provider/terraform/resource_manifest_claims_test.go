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

// claimsConfig is a ConfigMap manifest with the policies low (east,
// priority 1) and, when withHigh, high (west, priority 5, preemption as
// given) in its propagation_policies.
func (m *members) claimsConfig(withHigh bool, preemption string) string {
	policies := `[flotilla_propagation_policy.low]`
	if withHigh {
		policies = `[flotilla_propagation_policy.low, flotilla_propagation_policy.high]`
	}
	return m.clusterHCL("east", "") + m.clusterHCL("west", "") + fmt.Sprintf(`
resource "flotilla_propagation_policy" "low" {
  name               = "low"
  namespace          = "shop"
  priority           = 1
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap" }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}

resource "flotilla_propagation_policy" "high" {
  name               = "high"
  namespace          = "shop"
  priority           = 5
  preemption         = %q
  resource_selectors = [{ api_version = "v1", kind = "ConfigMap", name = "settings" }]
  placement          = { cluster_affinity = { cluster_names = ["west"] } }
}

resource "flotilla_manifest" "settings" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "settings", namespace = "shop" }
    data       = { mode = "on" }
  }
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = %s
}
`, preemption, policies)
}

// TestAccManifestPreemption: the claim recorded in state is sticky, as in
// Karmada's detector. Adding a higher-priority policy to a manifest's
// propagation_policies leaves the template with its policy and placement;
// the same policy with preemption Always takes it, and the plan says so
// before anything moves.
func TestAccManifestPreemption(t *testing.T) {
	t.Parallel()
	m := startFleet(t, "east", "west")
	expectClaim := func(policy string, placement map[string]knownvalue.Check) []plancheck.PlanCheck {
		return []plancheck.PlanCheck{
			plancheck.ExpectKnownValue("flotilla_manifest.settings", tfjsonpath.New("policy"), knownvalue.StringExact(policy)),
			plancheck.ExpectKnownValue("flotilla_manifest.settings", tfjsonpath.New("placement"), knownvalue.MapExact(placement)),
		}
	}
	only := func(cluster string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			for name, c := range m.clients {
				_, err := c.CoreV1().ConfigMaps("shop").Get(context.Background(), "settings", metav1.GetOptions{})
				switch {
				case name == cluster && err != nil:
					return fmt.Errorf("cluster %s: configmap shop/settings: %w", name, err)
				case name != cluster && !apierrors.IsNotFound(err):
					return fmt.Errorf("cluster %s: configmap shop/settings should not exist (err %v)", name, err)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config:           m.claimsConfig(false, "Never"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: expectClaim("PropagationPolicy shop/low", map[string]knownvalue.Check{"east": knownvalue.Int64Exact(0)})},
				Check:            only("east"),
			},
			{
				// Without the recorded claim, high (priority 5) would win.
				Config:           m.claimsConfig(true, "Never"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: expectClaim("PropagationPolicy shop/low", map[string]knownvalue.Check{"east": knownvalue.Int64Exact(0)})},
				Check:            only("east"),
			},
			{
				Config: m.claimsConfig(true, "Always"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(expectClaim("PropagationPolicy shop/high", map[string]knownvalue.Check{"west": knownvalue.Int64Exact(0)}),
					plancheck.ExpectResourceAction("flotilla_manifest.settings", plancheck.ResourceActionUpdate))},
				Check: only("west"),
			},
		},
	})
}
