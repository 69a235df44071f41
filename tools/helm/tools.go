//go:build tools

// Package tools pins the helm CLI, which `make test` uses to lint the chart
// in deploy/helm/flotilla and the chart's tests use to render it. It is a
// module of its own so that Helm's dependencies move neither the
// provider's nor the other tools'.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
