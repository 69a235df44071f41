# A name alone cannot be reached, so the ID is the cluster's name, a kubeconfig
# path and, optionally, a context. The cluster must already be registered under
# that name in the provider's fleet; its facts (labels, region, zones, taints)
# are read from its membership marker.
terraform import flotilla_cluster.east 'east,~/.kube/config,kind-east'
