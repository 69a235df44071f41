//go:build tools

// Package tools pins goreleaser, which `make release-snapshot` uses to build
// the provider's zips, checksums and registry manifest in the Terraform
// Registry's layout. It is a module of its own so that goreleaser's
// dependencies move neither the provider's nor the other tools'.
package tools

import (
	_ "github.com/goreleaser/goreleaser/v2"
)
