# Staged rollout: three clusters run web. A change reaches the canary
# cluster first; only when web is healthy there for the bake time does it
# go to the other two, one at a time, each gated the same way. A change
# that does not become healthy stops at the canary (or is rolled back
# there, with on_gate_failure = "Rollback"), and the other clusters keep
# running the previous version.

provider "flotilla" {
  fleet = "staged-rollout"
  # Refresh and destroy reach the clusters through the connections recorded in state; a recorded
  # context beside the kubeconfig file is used only if named here (an edited state cannot pick another).
  trusted_connection_overrides = [{ context = var.canary_context }, { context = var.eu_west_context }, { context = var.us_east_context }]
}

resource "flotilla_cluster" "canary" {
  name       = "canary"
  labels     = { ring = "canary" }
  kubeconfig = { path = var.kubeconfig_path, context = var.canary_context }
}

resource "flotilla_cluster" "eu_west" {
  name       = "eu-west"
  region     = "eu-west"
  kubeconfig = { path = var.kubeconfig_path, context = var.eu_west_context }
}

resource "flotilla_cluster" "us_east" {
  name       = "us-east"
  region     = "us-east"
  kubeconfig = { path = var.kubeconfig_path, context = var.us_east_context }
}

resource "flotilla_propagation_policy" "web" {
  name      = "web"
  namespace = "default"

  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]

  # Every cluster gets all replicas (Duplicated, the default).

  rollout = {
    on_gate_failure = var.on_gate_failure
    stages = [
      {
        # The canary ring first, then a bake: it must stay healthy this long.
        name             = "canary"
        cluster_affinity = { label_selector = { match_labels = { ring = "canary" } } }
        gate             = { bake_seconds = var.canary_bake_seconds, timeout_seconds = var.gate_timeout_seconds }
      },
      {
        # Every other cluster, one at a time (in name order), each gated.
        name                    = "rest"
        max_concurrent_clusters = 1
        gate                    = { bake_seconds = var.bake_seconds, timeout_seconds = var.gate_timeout_seconds }
      },
    ]
  }
}

resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "default" }
    spec = {
      replicas = var.replicas
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec     = { containers = [{ name = "web", image = var.image }] }
      }
    }
  }
  clusters             = [flotilla_cluster.canary, flotilla_cluster.eu_west, flotilla_cluster.us_east]
  propagation_policies = [flotilla_propagation_policy.web]

  # Apply waits on every gate: leave room for the bakes.
  timeouts {
    create = "15m"
    update = "15m"
  }
}
