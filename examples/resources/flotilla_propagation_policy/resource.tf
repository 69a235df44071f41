# Run web on the prod clusters, with a third of the replicas in east and two
# thirds in west. Its ConfigMaps and Secrets follow it (propagate_deps).
resource "flotilla_propagation_policy" "web" {
  name      = "web"
  namespace = "default"

  resource_selectors = [
    { api_version = "apps/v1", kind = "Deployment", name = "web" },
  ]
  propagate_deps = true

  placement = {
    cluster_affinity = {
      label_selector = { match_labels = { tier = "prod" } }
      exclude        = ["canary"]
    }
    spread_constraints = [{ spread_by_field = "cluster", min_groups = 2, max_groups = 2 }]
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
