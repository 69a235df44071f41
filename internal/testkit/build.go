package testkit

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BuildProvider builds terraform-provider-flotilla, the binary the image
// carries, from the module at moduleRoot into the test's temporary
// directory and returns its path, for tests that run its subcommands as
// real processes.
func BuildProvider(t testing.TB, moduleRoot string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform-provider-flotilla")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
