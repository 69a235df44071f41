//go:build tools

// Package tools pins the Crossplane CLI (crank, for `crossplane render` and
// `crossplane xpkg`), Crossplane core (`crossplane core init` and `core
// start`) and function-patch-and-transform, which the tests in
// examples/crossplane use to render the example Compositions and to run them
// end to end. It is a module of its own so that Crossplane's dependencies
// move neither the provider's nor the linter's.
package tools

import (
	_ "github.com/crossplane-contrib/function-patch-and-transform"
	_ "github.com/crossplane/crossplane/v2/cmd/crank"
	_ "github.com/crossplane/crossplane/v2/cmd/crossplane"
)
