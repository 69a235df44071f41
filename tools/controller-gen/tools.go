//go:build tools

// Package tools pins controller-gen, which generates flotilla's deep copies
// and CRD manifests. It is a module of its own so that its dependencies do
// not move the linter's.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
