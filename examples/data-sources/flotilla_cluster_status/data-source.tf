# Live status of a member. An unreachable cluster is not an error: ready is
# false and the Ready condition says why.
data "flotilla_cluster_status" "east" {
  name       = "east"
  kubeconfig = { path = "~/.kube/config", context = "kind-east" }
}

output "east_ready" {
  value = data.flotilla_cluster_status.east.ready
}

output "east_version" {
  value = data.flotilla_cluster_status.east.kubernetes_version
}

# node_summary is null while the cluster is not ready.
output "east_ready_nodes" {
  value = try(data.flotilla_cluster_status.east.node_summary.ready_num, 0)
}
