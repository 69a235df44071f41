package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestManifestRefusesAutoscaling: a FederatedHPA (here in Karmada's group,
// as a Karmada user writes it) scales between runs, so a flotilla_manifest
// of one is refused at plan time with a pointer to continuous mode, never
// copied to members as if it worked.
func TestManifestRefusesAutoscaling(t *testing.T) {
	t.Parallel()
	config := continuousOnlyConfig("autoscaling.karmada.io/v1alpha1", "FederatedHPA",
		`{ scaleTargetRef = { apiVersion = "apps/v1", kind = "Deployment", name = "web" }, maxReplicas = 10 }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedMessage("FederatedHPA shop/web: FederatedHPA and CronFederatedHPA scale a template between runs (on the members' live metrics, or on a schedule), which only the continuous control plane does"),
		}},
	})
}
