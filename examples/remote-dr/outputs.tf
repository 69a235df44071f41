output "placement" {
  description = "Replicas per cluster (\"Kind/name\" => { cluster => replicas })."
  value       = { "Deployment/payments" = flotilla_manifest.payments.placement }
}

output "affinity_term" {
  description = "The cluster_affinities term in use: primary, or dr after a failover."
  value       = flotilla_manifest.payments.affinity_term
}

output "status" {
  description = "Health of the app after the rollout."
  value       = flotilla_manifest.payments.status.health
}
