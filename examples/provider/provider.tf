# The fleet name goes into the ownership labels of every object flotilla
# applies, so two fleets (or two Terraform workspaces) never touch each
# other's objects in a shared member cluster.
provider "flotilla" {
  fleet             = "prod"
  apply_parallelism = 8

  # Shown as hashes in plans and state, besides Secrets, which always are.
  sensitive_kinds = ["SealedSecret.bitnami.com"]

  # Refresh and destroy reach members through connections recorded in
  # state; a credential plugin recorded there runs only if listed here.
  trusted_exec = [{
    command = "aws"
    args    = ["eks", "get-token", "--cluster-name", "east", "--output", "json"]
  }]
}
