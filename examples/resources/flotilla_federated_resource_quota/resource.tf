# Team "shop" may request 2 CPUs and 4Gi of memory across the fleet: 1 CPU
# and 2Gi in each of east and west. `terraform plan` shows, in `rendered`,
# the ResourceQuota each cluster gets (the same object continuous mode
# writes); apply creates them, destroy removes them.

provider "flotilla" {
  trusted_connection_overrides = [{ context = "kind-east" }, { context = "kind-west" }]
}

resource "flotilla_cluster" "east" {
  name       = "east"
  kubeconfig = { path = "~/.kube/config", context = "kind-east" }
}

resource "flotilla_cluster" "west" {
  name       = "west"
  kubeconfig = { path = "~/.kube/config", context = "kind-west" }
}

resource "flotilla_federated_resource_quota" "shop" {
  name      = "shop"
  namespace = "shop"
  overall   = { cpu = "2", memory = "4Gi" }
  static_assignments = [
    { cluster_name = "east", hard = { cpu = "1", memory = "2Gi" } },
    { cluster_name = "west", hard = { cpu = "1", memory = "2Gi" } },
  ]
  clusters = [flotilla_cluster.east, flotilla_cluster.west]
}

resource "flotilla_propagation_policy" "web" {
  name               = "web"
  namespace          = "shop"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  placement = {
    replica_scheduling = { replica_scheduling_type = "Divided", replica_division_preference = "Weighted" }
  }
}

# The quota is passed to the manifest like the policies: a plan whose
# replicas would take the namespace over `overall` is refused with the
# numbers (here 4 replicas of 500m fit; 5 would not).
resource "flotilla_manifest" "web" {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "shop" }
    spec = {
      replicas = var.replicas
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec = { containers = [{
          name      = "web"
          image     = "nginx:1.27"
          resources = { requests = { cpu = "500m", memory = "256Mi" }, limits = { cpu = "500m", memory = "256Mi" } }
        }] }
      }
    }
  }
  clusters                  = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies      = [flotilla_propagation_policy.web]
  federated_resource_quotas = [flotilla_federated_resource_quota.shop]
  depends_on                = [flotilla_federated_resource_quota.shop]
}

variable "replicas" {
  type    = number
  default = 4
}
