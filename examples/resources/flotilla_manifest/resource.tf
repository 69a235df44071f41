# web runs in two clusters, its three replicas divided 1:2 between east and
# west; west pulls the image from its regional registry. `terraform plan`
# shows `placement` ({ east = 1, west = 2 }) and the exact Deployment each
# cluster gets in `rendered`, before anything rolls out.

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
  kubeconfig = { path = "~/.kube/config", context = "kind-west" }
}

resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference = {
        static_weight_list = [
          { target_cluster = { cluster_names = ["east"] }, weight = 1 },
          { target_cluster = { cluster_names = ["west"] }, weight = 2 },
        ]
      }
    }
  }
}

resource "flotilla_override_policy" "west_registry" {
  name               = "west-registry"
  namespace          = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  override_rules = [{
    target_cluster = { cluster_names = ["west"] }
    overriders = {
      image_overrider = [{ component = "Registry", operator = "replace", value = "registry.eu.example.com" }]
    }
  }]
}

resource "flotilla_manifest" "web" {
  # Any Kubernetes object, as an HCL object or from YAML:
  # provider::flotilla::decode_manifests(file("${path.module}/web.yaml"))[0]
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "default" }
    spec = {
      replicas = 3
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec     = { containers = [{ name = "web", image = "nginx:1.27" }] }
      }
    }
  }

  # The fleet, by reference: Terraform orders and plans every input.
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.web]
  override_policies    = [flotilla_override_policy.west_registry]

  # How long apply waits for the rollout to become healthy everywhere.
  timeouts {
    create = "5m"
    update = "5m"
  }
}

output "web_placement" {
  value = flotilla_manifest.web.placement # { east = 1, west = 2 }
}
