# Active-active: two clusters, east and west, both serve the app. The
# Deployment's replicas are divided between them by static weights, the
# Service goes to both, and west pulls the image from its regional registry.

provider "flotilla" {
  # Written into the ownership labels of everything flotilla applies.
  fleet = "active-active"
  # Refresh and destroy reach the clusters through the connections recorded in state; a recorded
  # context beside the kubeconfig file is used only if named here (an edited state cannot pick another).
  trusted_connection_overrides = [{ context = var.east_context }, { context = var.west_context }]
}

resource "flotilla_cluster" "east" {
  name       = "east"
  region     = "us-east"
  labels     = { serving = tostring(var.east_serving) }
  kubeconfig = { path = var.kubeconfig_path, context = var.east_context }
}

resource "flotilla_cluster" "west" {
  name       = "west"
  region     = "eu-west"
  labels     = { serving = "true" }
  kubeconfig = { path = var.kubeconfig_path, context = var.west_context }
}

# Every serving cluster runs web. A Deployment is divided by the weights; a
# Service has no replicas, so each selected cluster simply gets one.
resource "flotilla_propagation_policy" "web" {
  name      = "web"
  namespace = "default"

  resource_selectors = [
    { api_version = "apps/v1", kind = "Deployment", name = "web" },
    { api_version = "v1", kind = "Service", name = "web" },
  ]

  placement = {
    cluster_affinity = { label_selector = { match_labels = { serving = "true" } } }
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference = {
        static_weight_list = [
          { target_cluster = { cluster_names = [flotilla_cluster.east.name] }, weight = var.east_weight },
          { target_cluster = { cluster_names = [flotilla_cluster.west.name] }, weight = var.west_weight },
        ]
      }
    }
  }
}

# West pulls from its regional registry: nginx:1.27 becomes
# registry.eu.example.com/nginx:1.27 there, and only there.
resource "flotilla_override_policy" "west_registry" {
  name      = "west-registry"
  namespace = "default"

  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]

  override_rules = [{
    target_cluster = { cluster_names = [flotilla_cluster.west.name] }
    overriders = {
      image_overrider = [{ component = "Registry", operator = "replace", value = var.west_registry }]
    }
  }]
}

locals {
  # app.yaml's documents, keyed "Kind/name".
  manifests = {
    for m in provider::flotilla::decode_manifests(templatefile("${path.module}/app.yaml", {
      image    = var.image
      replicas = var.replicas
    })) : "${m.kind}/${m.metadata.name}" => m
  }
}

resource "flotilla_manifest" "web" {
  manifest             = local.manifests["Deployment/web"]
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.web]
  override_policies    = [flotilla_override_policy.west_registry]
}

resource "flotilla_manifest" "web_service" {
  manifest             = local.manifests["Service/web"]
  clusters             = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies = [flotilla_propagation_policy.web]
  override_policies    = [flotilla_override_policy.west_registry]
}
