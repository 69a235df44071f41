terraform {
  # flotilla_manifest's write-only fleet inputs need Terraform 1.11.
  required_version = ">= 1.11"

  required_providers {
    flotilla = {
      source = "flotilla-io/flotilla"
    }
  }
}
