# Where would this Deployment go, and why not elsewhere? Nothing is applied.

# Refresh, import and destroy reach the clusters through the connections recorded in
# state; a recorded context beside the kubeconfig file is used only if named here, so an
# edited state cannot pick another.
provider "flotilla" {
  trusted_connection_overrides = [{ context = "kind-east" }, { context = "kind-west" }]
}

resource "flotilla_cluster" "east" {
  name       = "east"
  region     = "us-east"
  kubeconfig = { path = "~/.kube/config", context = "kind-east" }
}

resource "flotilla_cluster" "west" {
  name       = "west"
  region     = "eu-west"
  taints     = [{ key = "dedicated", value = "batch", effect = "NoSchedule" }]
  kubeconfig = { path = "~/.kube/config", context = "kind-west" }
}

resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    replica_scheduling = { replica_scheduling_type = "Divided" }
  }
}

data "flotilla_placement" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "default" }
    spec = {
      replicas = 4
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec     = { containers = [{ name = "web", image = "nginx:1.27" }] }
      }
    }
  }
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.web]
}

output "placement" {
  value = data.flotilla_placement.web.placement # { east = 4 }: west's taint is not tolerated
}

output "why_not_west" {
  value = data.flotilla_placement.web.reasons["west"]
}
