# Two clusters reached through kubeconfig contexts. Contexts and exec plugins
# keep credentials out of the configuration, so the values that
# flotilla_manifest receives from these resources stay the same between runs.

# Refresh, import and destroy reach the clusters through the connections recorded in
# state; a recorded context beside the kubeconfig file is used only if named here, so an
# edited state cannot pick another.
provider "flotilla" {
  trusted_connection_overrides = [{ context = "kind-east" }, { context = "kind-west" }]
}

resource "flotilla_cluster" "east" {
  name           = "east"
  cloud_provider = "aws"
  region         = "us-east-1"
  zones          = ["us-east-1a", "us-east-1b"]
  labels         = { tier = "prod" }

  kubeconfig = { path = "~/.kube/config", context = "kind-east" }
}

# Only templates whose propagation policy tolerates the taint land here.
resource "flotilla_cluster" "west" {
  name           = "west"
  cloud_provider = "aws"
  region         = "us-west-2"
  zones          = ["us-west-2a"]
  labels         = { tier = "prod", pool = "batch" }
  taints         = [{ key = "dedicated", value = "batch", effect = "NoSchedule" }]

  kubeconfig = { path = "~/.kube/config", context = "kind-west" }
}

# A cluster created in the same apply works too: its host is unknown at plan
# time, and flotilla plans from the declared facts. An exec plugin fetches a
# short-lived token at apply, so nothing rotates in the configuration:
#
# resource "flotilla_cluster" "eks" {
#   name                   = "eks-east"
#   region                 = "us-east-1"
#   host                   = aws_eks_cluster.east.endpoint
#   cluster_ca_certificate = base64decode(aws_eks_cluster.east.certificate_authority[0].data)
#   exec = {
#     command = "aws"
#     args    = ["eks", "get-token", "--cluster-name", aws_eks_cluster.east.name]
#   }
# }
