terraform {
  # Provider functions (provider::flotilla::decode_manifests) need Terraform 1.8.
  required_version = ">= 1.8"

  required_providers {
    flotilla = {
      source = "flotilla-io/flotilla"
    }
  }
}
