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
	dir := os.Getenv("FLOTILLA_CROSSPLANE_TOOLS")
	if dir == "" {
		sum, err := os.ReadFile(filepath.Join(moduleRoot, "tools", "crossplane", "go.sum"))
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
