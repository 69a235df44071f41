//go:build tools

// Package tools pins the versions of the developer tools that `make` builds
// (golangci-lint, tfplugindocs, controller-gen). It is never compiled into the provider.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
)
