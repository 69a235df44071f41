//go:build tools

// Package tools pins metrics-server, which the autoscaling tests run on
// each member cluster (scraping kwok's emulated kubelet metrics) to serve
// the real metrics.k8s.io API. It is a module of its own so that
// metrics-server's dependencies move neither the provider's nor the
// other tools'.
package tools

import (
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
