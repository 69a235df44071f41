# Remote DR: the app runs in the primary cluster. When the primary is taken
# out of service (tainted NoExecute), the next plan moves it, whole, to the
# DR cluster, and apply does it.
#
# The DR cluster is tainted role=dr:NoSchedule, so nothing lands there by
# accident: only a policy that tolerates the taint can use it.

provider "flotilla" {
  fleet = "remote-dr"
  # Refresh and destroy reach the clusters through the connections recorded in state; a recorded
  # context beside the kubeconfig file is used only if named here (an edited state cannot pick another).
  trusted_connection_overrides = [{ context = var.primary_context }, { context = var.dr_context }]
}

resource "flotilla_cluster" "primary" {
  name       = "primary"
  region     = "us-east"
  labels     = { role = "primary" }
  taints     = var.primary_taints
  kubeconfig = { path = var.kubeconfig_path, context = var.primary_context }
}

resource "flotilla_cluster" "dr" {
  name       = "dr"
  region     = "us-west"
  labels     = { role = "dr" }
  taints     = [{ key = "role", value = "dr", effect = "NoSchedule" }]
  kubeconfig = { path = var.kubeconfig_path, context = var.dr_context }
}

# cluster_affinities are tried in order; the first term with a cluster that
# passes every filter (taints included) wins. affinity_term on the manifest
# shows which one did.
resource "flotilla_propagation_policy" "payments" {
  name      = "payments"
  namespace = "default"

  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "payments" }]

  placement = {
    cluster_affinities = [
      { affinity_name = "primary", label_selector = { match_labels = { role = "primary" } } },
      { affinity_name = "dr", label_selector = { match_labels = { role = "dr" } } },
    ]
    # Admits the DR cluster; the primary's maintenance taint stays intolerable.
    cluster_tolerations = [{ key = "role", operator = "Equal", value = "dr", effect = "NoSchedule" }]
  }
}

locals {
  manifests = provider::flotilla::decode_manifests(templatefile("${path.module}/app.yaml", {
    replicas = var.replicas
  }))
}

resource "flotilla_manifest" "payments" {
  manifest             = local.manifests[0]
  clusters             = [flotilla_cluster.primary, flotilla_cluster.dr]
  propagation_policies = [flotilla_propagation_policy.payments]
}
