# In every staging cluster, whatever the namespace: debug logging for the web
# container, and a log level in the app's JSON config.
resource "flotilla_cluster_override_policy" "staging_debug" {
  name = "staging-debug"

  resource_selectors = [
    { api_version = "apps/v1", kind = "Deployment", label_selector = { match_labels = { app = "web" } } },
    { api_version = "v1", kind = "ConfigMap", name = "web-config" },
  ]

  override_rules = [{
    target_cluster = { label_selector = { match_labels = { env = "staging" } } }
    overriders = {
      args_overrider = [{ container_name = "web", operator = "add", value = ["--log-level=debug"] }]
      field_overrider = [{
        field_path = "/data/config.json"
        json       = [{ sub_path = "/log/level", operator = "replace", value = jsonencode("debug") }]
      }]
    }
  }]
}
