#!/usr/bin/env bash
# Terraform acceptance tests run the real terraform binary (1.11 or newer, for write-only attributes).
set -euo pipefail
if ! command -v terraform >/dev/null 2>&1; then
  echo "terraform is not on PATH: install Terraform 1.11+ (https://developer.hashicorp.com/terraform/install) to run the acceptance tests" >&2
  exit 1
fi
echo "terraform: $(terraform version | head -1)"
