package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// CrossplaneTools returns the directory that holds what `make tools` builds
// from tools/crossplane (the crossplane CLI, Crossplane core,
// function-patch-and-transform, and the copied Crossplane CRDs and function
// package directory): $FLOTILLA_CROSSPLANE_TOOLS, or
// ~/.cache/flotilla/tools/<hash of tools/crossplane/go.sum under
// moduleRoot>. Without one of binaries (files or directories) the test is
// skipped, except in CI (CI set), where `make test` has built them and
// their absence is a failure.
func CrossplaneTools(t testing.TB, moduleRoot string, binaries ...string) string {
	t.Helper()
	return pinnedTools(t, moduleRoot, "crossplane", "FLOTILLA_CROSSPLANE_TOOLS", binaries...)
}

// Helm returns the path of the pinned helm CLI: in $FLOTILLA_HELM_TOOLS, or
// where `make tools` puts it (~/.cache/flotilla/tools/<hash of
// tools/helm/go.sum>). Without it the test is skipped, except in CI, as
// CrossplaneTools.
func Helm(t testing.TB, moduleRoot string) string {
	t.Helper()
	return filepath.Join(pinnedTools(t, moduleRoot, "helm", "FLOTILLA_HELM_TOOLS", "helm"), "helm")
}

// Goreleaser returns the path of the pinned goreleaser: in
// $FLOTILLA_GORELEASER_TOOLS, or where `make tools` puts it
// (~/.cache/flotilla/tools/<hash of tools/goreleaser/go.sum>). Without it
// the test is skipped, except in CI, as CrossplaneTools.
func Goreleaser(t testing.TB, moduleRoot string) string {
	t.Helper()
	return filepath.Join(pinnedTools(t, moduleRoot, "goreleaser", "FLOTILLA_GORELEASER_TOOLS", "goreleaser"), "goreleaser")
}

// MetricsServer returns the path of the pinned metrics-server: in
// $FLOTILLA_METRICS_SERVER_TOOLS, or where `make tools` puts it
// (~/.cache/flotilla/tools/<hash of tools/metrics-server/go.sum>).
// Without it the test is skipped, except in CI, as CrossplaneTools.
func MetricsServer(t testing.TB, moduleRoot string) string {
	t.Helper()
	return filepath.Join(pinnedTools(t, moduleRoot, "metrics-server", "FLOTILLA_METRICS_SERVER_TOOLS", "metrics-server"), "metrics-server")
}

// CustomMetricsAdapter returns the path of the pinned custom metrics
// adapter: in $FLOTILLA_CUSTOM_METRICS_TOOLS, or where `make tools` puts it
// (~/.cache/flotilla/tools/<hash of tools/custom-metrics/go.sum>).
// Without it the test is skipped, except in CI, as CrossplaneTools.
func CustomMetricsAdapter(t testing.TB, moduleRoot string) string {
	t.Helper()
	return filepath.Join(pinnedTools(t, moduleRoot, "custom-metrics", "FLOTILLA_CUSTOM_METRICS_TOOLS", "custom-metrics-adapter"), "custom-metrics-adapter")
}

// pinnedTools is the directory of the tools built from the module
// tools/<module>: $env, or the cache directory named after its go.sum.
func pinnedTools(t testing.TB, moduleRoot, module, env string, binaries ...string) string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		sum, err := os.ReadFile(filepath.Join(moduleRoot, "tools", module, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(sum)
		dir = filepath.Join(home, ".cache", "flotilla", "tools", hex.EncodeToString(h[:])[:12])
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			msg := fmt.Sprintf("%s not built (%v): run `make tools`", b, err)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}
