package terraform

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// continuousOnlyConfig is a flotilla_manifest of one object of a kind only
// continuous mode serves (apiVersion, kind, and spec as HCL, or "" for
// none), claimed by a policy, with a cluster at a closed loopback port:
// the refusal at plan must need no member.
func continuousOnlyConfig(apiVersion, kind, spec string) string {
	specLine := ""
	if spec != "" {
		specLine = "\n    spec       = " + spec
	}
	return fmt.Sprintf(`
resource "flotilla_cluster" "east" {
  name  = "east"
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"
}
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  resource_selectors = [{ api_version = %[1]q, kind = %[2]q }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = %[1]q
    kind       = %[2]q
    metadata   = { name = "web", namespace = "shop" }%[3]s
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.web]
}
`, apiVersion, kind, specLine)
}

// TestManifestRefusesMultiClusterServices: a ServiceExport (and the other
// multi-cluster services kinds) does its work between runs, so a
// flotilla_manifest of one is refused at plan time with a pointer to
// continuous mode, never copied to members as if it worked.
func TestManifestRefusesMultiClusterServices(t *testing.T) {
	t.Parallel()
	config := continuousOnlyConfig("multicluster.x-k8s.io/v1alpha1", "ServiceExport", "")
	// flotilla's MultiClusterService is refused too, with a pointer to
	// where continuous mode serves it.
	mcs := continuousOnlyConfig("networking.flotilla.io/v1alpha1", "MultiClusterService", `{ types = ["CrossCluster"] }`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedMessage("ServiceExport shop/web: multi-cluster services follow the members' endpoints between runs, which only the continuous control plane does"),
		}, {
			Config:      mcs,
			PlanOnly:    true,
			ExpectError: wrappedMessage("MultiClusterService shop/web: multi-cluster services follow the members' endpoints between runs, which only the continuous control plane does; a plan cannot show them and an apply would not keep them current; declare it as networking.flotilla.io/v1alpha1 MultiClusterService on the host of the continuous control plane"),
		}},
	})
}
