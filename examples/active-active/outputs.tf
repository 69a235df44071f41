locals {
  app = {
    "Deployment/web" = flotilla_manifest.web
    "Service/web"    = flotilla_manifest.web_service
  }
}

output "placement" {
  description = "Replicas per cluster for each manifest (\"Kind/name\" => { cluster => replicas })."
  value       = { for key, m in local.app : key => m.placement }
}

output "images" {
  description = "The web container's image in each cluster, after overrides."
  value = {
    for cluster, obj in flotilla_manifest.web.rendered :
    cluster => jsondecode(obj).spec.template.spec.containers[0].image
  }
}

output "status" {
  description = "Health of each manifest after the rollout."
  value       = { for key, m in local.app : key => m.status.health }
}
