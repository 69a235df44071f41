# The fleet name goes into the ownership labels of every object flotilla
# applies, so two fleets (or two Terraform workspaces) never touch each
# other's objects in a shared member cluster.
provider "flotilla" {
  fleet             = "prod"
  apply_parallelism = 8
}
