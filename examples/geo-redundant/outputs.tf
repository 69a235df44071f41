output "placement" {
  description = "Replicas per cluster (\"Kind/name\" => { cluster => replicas })."
  value       = { "Deployment/catalog" = flotilla_manifest.catalog.placement }
}

output "replicas_by_region" {
  description = "Replicas per region: both regions always have some."
  value = {
    for region in distinct([for c in flotilla_cluster.this : c.region]) :
    region => sum(concat([0], [
      for name, n in flotilla_manifest.catalog.placement : n if flotilla_cluster.this[name].region == region
    ]))
  }
}

output "status" {
  description = "Health of the app after the rollout."
  value       = flotilla_manifest.catalog.status.health
}
