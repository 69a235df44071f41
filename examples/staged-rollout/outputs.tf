output "stages" {
  description = "The stages in order, each with its clusters (\"stage\" => [clusters])."
  value       = { for s in flotilla_manifest.web.stages : s.name => s.clusters }
}

output "images" {
  description = "The web container's image each cluster runs, as the state records it."
  value = {
    for cluster, obj in flotilla_manifest.web.rendered :
    cluster => jsondecode(obj).spec.template.spec.containers[0].image
  }
}

output "status" {
  description = "Health of web after the rollout."
  value       = flotilla_manifest.web.status.health
}
