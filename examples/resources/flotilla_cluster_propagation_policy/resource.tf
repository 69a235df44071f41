# Platform objects go everywhere: CRDs, and namespaces labelled fleet-wide.
# Clusters in us-east are preferred; the DR cluster is used when none of them
# can take the objects. Clusters under maintenance are still eligible.
resource "flotilla_cluster_propagation_policy" "platform" {
  name = "platform"

  resource_selectors = [
    { api_version = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition" },
    {
      api_version    = "v1"
      kind           = "Namespace"
      label_selector = { match_labels = { "example.com/fleet-wide" = "true" } }
    },
  ]
  priority = 10

  placement = {
    cluster_affinities = [
      {
        affinity_name  = "primary"
        field_selector = { match_expressions = [{ key = "region", operator = "In", values = ["us-east"] }] }
      },
      { affinity_name = "dr", cluster_names = ["dr-west"] },
    ]
    cluster_tolerations = [{ key = "maintenance", operator = "Exists", effect = "NoSchedule" }]
  }
  preserve_resources_on_deletion = true
}
