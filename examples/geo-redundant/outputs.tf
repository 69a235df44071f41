output "placement" {
  description = "Replicas per cluster (\"Kind/name\" => { cluster => replicas })."
  value       = { "Deployment/catalog" = flotilla_manifest.catalog.placement }
}

output "replicas_by_region" {
  description = "Replicas per region: both regions always have some."
  value = {
    for region in distinct(local.clusters[*].region) :
    region => sum(concat([0], [
      for c in local.clusters : lookup(flotilla_manifest.catalog.placement, c.name, 0) if c.region == region
    ]))
  }
}

output "status" {
  description = "Health of the app after the rollout."
  value       = flotilla_manifest.catalog.status.health
}
