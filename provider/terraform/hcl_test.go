package terraform

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// quoteHCL returns s as an HCL string literal. Go's quoting is close enough for
// test input that holds no template sequences.
func quoteHCL(s string) string { return strconv.Quote(s) }

// wrappedMessage matches msg in terraform's output, where long diagnostics are
// wrapped: any run of spaces in msg may appear as a line break.
func wrappedMessage(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

func regexpMust(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// requiredProvidersHCL is the terraform block that requires flotilla by its
// registry address, as a configuration run outside dev_overrides needs.
const requiredProvidersHCL = "terraform {\n  required_providers {\n    flotilla = { source = \"flotilla-io/flotilla\" }\n  }\n}\n"

// providerHCL declares the flotilla provider of fleet, with extra attributes
// (HCL lines, may be empty).
func providerHCL(fleet, extra string) string {
	return fmt.Sprintf("provider \"flotilla\" {\n  fleet = %q\n  %s\n}\n", fleet, extra)
}

// trustedContextsHCL is the provider attribute that lets refresh and
// destroy use a recorded kubeconfig context beside a kubeconfig file (see
// trust_overrides.go), for the testenv's default cluster names.
const trustedContextsHCL = `trusted_connection_overrides = [{ context = "member1" }, { context = "member2" }, { context = "member3" }, { context = "member4" }]`

// tokenClusterHCL declares flotilla_cluster name that reaches host with a
// bearer token and a CA, with extra attributes (may be empty).
func tokenClusterHCL(name, host, token string, ca []byte, extra string) string {
	return fmt.Sprintf(`
resource "flotilla_cluster" %q {
  name                   = %q
  host                   = %s
  token                  = %s
  cluster_ca_certificate = %s
  %s
}
`, name, name, quoteHCL(host), quoteHCL(token), quoteHCL(string(ca)), extra)
}

// memberClusterHCL is tokenClusterHCL for a testenv member.
func memberClusterHCL(name string, c *testenv.Cluster, extra string) string {
	return tokenClusterHCL(name, c.Host, c.Token, c.CAData, extra)
}

// policyHCL declares flotilla_propagation_policy name in namespace that
// selects the object of the same name and kind and places it on the named
// clusters, with extra attributes (may be empty).
func policyHCL(name, namespace, apiVersion, kind string, clusters []string, extra string) string {
	quoted := make([]string, len(clusters))
	for i, c := range clusters {
		quoted[i] = strconv.Quote(c)
	}
	return fmt.Sprintf(`
resource "flotilla_propagation_policy" %q {
  name               = %q
  namespace          = %q
  resource_selectors = [{ api_version = %q, kind = %q, name = %q }]
  placement          = { cluster_affinity = { cluster_names = [%s] } }
  %s
}
`, name, name, namespace, apiVersion, kind, name, strings.Join(quoted, ", "), extra)
}

// webDeployment is the flotilla_manifest "web" of Deployment shop/web (app=web)
// that the acceptance tests place.
type webDeployment struct {
	replicas int
	image    string
	// labels is an HCL map of metadata.labels, or empty for none.
	labels string
	// container holds extra attributes of the web container (HCL, may be empty).
	container string
	// attrs are the resource's attributes besides manifest: clusters, policies.
	attrs string
}

// HCL declares the resource.
func (w webDeployment) HCL() string {
	labels, container := "", ""
	if w.labels != "" {
		labels = ", labels = " + w.labels
	}
	if w.container != "" {
		container = ", " + w.container
	}
	return fmt.Sprintf(`
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "shop"%s }
    spec = {
      replicas = %d
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec = { containers = [{ name = "web", image = %q%s }] }
      }
    }
  }
  %s
}
`, labels, w.replicas, w.image, container, w.attrs)
}

// webAttrs places the web manifest on the named flotilla_cluster resources
// with the web policy.
func webAttrs(clusters ...string) string {
	refs := make([]string, len(clusters))
	for i, c := range clusters {
		refs[i] = "flotilla_cluster." + c
	}
	return fmt.Sprintf("clusters             = [%s]\n  propagation_policies = [flotilla_propagation_policy.web]", strings.Join(refs, ", "))
}

// configMapHCL declares flotilla_manifest resource of ConfigMap
// default/name with data v = value, placed on local.clusters by the named
// policy without waiting for rollout; extra goes into the block.
func configMapHCL(resource, name, value, policy, extra string) string {
	return fmt.Sprintf(`
resource "flotilla_manifest" %q {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = %q, namespace = "default" }
    data       = { v = %q }
  }
  clusters             = local.clusters
  propagation_policies = [flotilla_propagation_policy.%s]
  wait_for_rollout     = false
  %s
}
`, resource, name, value, policy, extra)
}
