# Geo-redundant: three clusters in two regions. The spread constraints put
# the app in both regions (min_groups = 2), one cluster per region, and its
# replicas are divided by what each chosen cluster has room for. Losing a
# region never takes the app down.

provider "flotilla" {
  fleet = "geo-redundant"
  # Refresh and destroy reach the clusters through the connections recorded in state; a recorded
  # context beside the kubeconfig file is used only if named here (an edited state cannot pick another).
  trusted_connection_overrides = [for c in values(var.contexts) : { context = c }]
}

resource "flotilla_cluster" "us_east_1" {
  name       = "us-east-1"
  region     = "us-east"
  zones      = ["us-east-1a"]
  kubeconfig = { path = var.kubeconfig_path, context = var.contexts.us_east_1 }
}

resource "flotilla_cluster" "us_east_2" {
  name       = "us-east-2"
  region     = "us-east"
  zones      = ["us-east-1b"]
  kubeconfig = { path = var.kubeconfig_path, context = var.contexts.us_east_2 }
}

resource "flotilla_cluster" "eu_west_1" {
  name       = "eu-west-1"
  region     = "eu-west"
  zones      = ["eu-west-1a"]
  kubeconfig = { path = var.kubeconfig_path, context = var.contexts.eu_west_1 }
}

resource "flotilla_propagation_policy" "catalog" {
  name      = "catalog"
  namespace = "default"

  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "catalog" }]

  placement = {
    # Exactly two regions, and one cluster in each: Karmada asks for a
    # cluster constraint beside a region one.
    spread_constraints = [
      { spread_by_field = "region", min_groups = 2, max_groups = 2 },
      { spread_by_field = "cluster", min_groups = 2, max_groups = 2 },
    ]
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference           = { dynamic_weight = "AvailableReplicas" }
    }
  }
}

locals {
  clusters = [flotilla_cluster.us_east_1, flotilla_cluster.us_east_2, flotilla_cluster.eu_west_1]
  manifests = provider::flotilla::decode_manifests(templatefile("${path.module}/app.yaml", {
    replicas = var.replicas
  }))
}

resource "flotilla_manifest" "catalog" {
  manifest             = local.manifests[0]
  clusters             = local.clusters
  propagation_policies = [flotilla_propagation_policy.catalog]
}
