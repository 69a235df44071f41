package terraform

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestManifestRefusesMultiClusterServices: a ServiceExport (and the other
// multi-cluster services kinds) does its work between runs, so a
// flotilla_manifest of one is refused at plan time with a pointer to
// continuous mode, never copied to members as if it worked. The cluster
// points at a closed loopback port: nothing here may need it.
func TestManifestRefusesMultiClusterServices(t *testing.T) {
	const config = `
resource "flotilla_cluster" "east" {
  name  = "east"
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"
}
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  resource_selectors = [{ api_version = "multicluster.x-k8s.io/v1alpha1", kind = "ServiceExport" }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "multicluster.x-k8s.io/v1alpha1"
    kind       = "ServiceExport"
    metadata   = { name = "web", namespace = "shop" }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.web]
}
`
	// flotilla's MultiClusterService is refused too, with a pointer to
	// what continuous mode does serve.
	mcs := strings.NewReplacer(`"multicluster.x-k8s.io/v1alpha1"`, `"networking.flotilla.io/v1alpha1"`,
		`"ServiceExport"`, `"MultiClusterService"`,
		`metadata   = { name = "web", namespace = "shop" }`, `metadata   = { name = "web", namespace = "shop" }
    spec       = { types = ["CrossCluster"] }`).Replace(config)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedMessage("ServiceExport shop/web: multi-cluster services follow the members' endpoints between runs, which only the continuous control plane does"),
		}, {
			Config:      mcs,
			PlanOnly:    true,
			ExpectError: wrappedMessage("MultiClusterService shop/web: multi-cluster services follow the members' endpoints between runs, which only the continuous control plane does; a plan cannot show them and an apply would not keep them current; the continuous control plane does not serve MultiClusterService yet"),
		}},
	})
}
