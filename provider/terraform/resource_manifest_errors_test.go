package terraform

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestManifestBadInput: each wrong configuration is refused at plan time
// with a diagnostic on the right attribute, before anything is applied.
// The clusters point at a closed loopback port: nothing here may need them.
func TestManifestBadInput(t *testing.T) {
	t.Parallel()
	const fleet = `
resource "flotilla_cluster" "east" {
  name  = "east"
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"
}
resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
  placement          = { cluster_affinity = { cluster_names = ["east"] } }
}
resource "flotilla_override_policy" "o" {
  name               = "o"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
  override_rules     = [{ overriders = { labels_overrider = [{ operator = "add", value = { a = "b" } }] } }]
}
locals {
  web = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "default" }
    spec       = { replicas = 2 }
  }
}
`
	cases := map[string]struct {
		resource string
		want     string
	}{
		"manifest without apiVersion": {
			resource: `manifest = { kind = "Deployment", metadata = { name = "web" } }
  clusters = [flotilla_cluster.east]`,
			want: `The manifest has no apiVersion`,
		},
		"manifest without a name": {
			resource: `manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = {} }
  clusters = [flotilla_cluster.east]`,
			want: `The manifest has no metadata.name`,
		},
		"manifest that is not an object": {
			resource: `manifest = "apiVersion: v1"
  clusters = [flotilla_cluster.east]`,
			want: `The manifest must be an object`,
		},
		"clusters that are not a list": {
			resource: `manifest = local.web
  clusters = "east"`,
			want: `Expected a list of flotilla_cluster resources`,
		},
		"the same cluster twice": {
			resource: `manifest = local.web
  clusters = [flotilla_cluster.east, flotilla_cluster.east]`,
			want: `Cluster "east" is listed twice`,
		},
		"an override policy among the propagation policies": {
			resource: `manifest = local.web
  clusters = [flotilla_cluster.east]
  propagation_policies = [flotilla_override_policy.o]`,
			want: `propagation_policies takes PropagationPolicy and ClusterPropagationPolicy resources`,
		},
		"a template no cluster can take": {
			resource: `manifest = merge(local.web, { metadata = { name = "web", namespace = "default" } })
  clusters = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.web]`,
			want: `Cannot place Deployment default/web`,
		},
		"a name no member can store": {
			resource: `manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "a/b" } }
  clusters = [flotilla_cluster.east]`,
			want: `metadata.name: Invalid value: "a/b": may not contain '/'`,
		},
		"replicas that are not a number": {
			resource: `manifest = merge(local.web, { spec = { replicas = "two" } })
  clusters = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.web]`,
			want: `spec.replicas`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviders,
				Steps: []resource.TestStep{{
					Config:      fleet + "resource \"flotilla_manifest\" \"web\" {\n  " + tc.resource + "\n}\n",
					PlanOnly:    true,
					ExpectError: wrappedMessage(tc.want),
				}},
			})
		})
	}
}
