# In eu-west clusters, pull web's image from the EU registry, run two
# replicas, and label the Deployment with its region.
resource "flotilla_override_policy" "eu_registry" {
  name      = "eu-registry"
  namespace = "default"

  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]

  override_rules = [{
    target_cluster = {
      field_selector = { match_expressions = [{ key = "region", operator = "In", values = ["eu-west"] }] }
    }
    overriders = {
      image_overrider  = [{ component = "Registry", operator = "replace", value = "registry.eu.example.com" }]
      labels_overrider = [{ operator = "add", value = { "example.com/region" = "eu-west" } }]
      # Plaintext values are JSON: write them with jsonencode.
      plaintext = [{ path = "/spec/replicas", operator = "replace", value = jsonencode(2) }]
    }
  }]
}
