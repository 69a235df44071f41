package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BuildProvider builds terraform-provider-flotilla, the binary the image
// carries, from the module at moduleRoot into the test's temporary
// directory and returns its path, for tests that run its subcommands as
// real processes.
//
// It builds with -trimpath because its callers build a tree exported into a
// new temporary directory each run (another revision, say): without it the
// Go build cache keys every package of the module on that directory, so all
// of them compiled afresh every run, a few CPU minutes; trimmed, a package
// is keyed on its content and only what the revision changed compiles.
func BuildProvider(t testing.TB, moduleRoot string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform-provider-flotilla")
	if err := goBuild(moduleRoot, bin, "-trimpath"); err != nil {
		t.Fatal(err)
	}
	return bin
}

// sharedBuild is the one build of the provider that SharedProvider hands
// to every test of a test binary.
var sharedBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// SharedProvider is BuildProvider once per test binary: the first call
// builds terraform-provider-flotilla from moduleRoot into a directory of
// its own (which holds nothing else, so it can be a Terraform
// dev_overrides directory), and every later call returns the same path
// without building again. Linking the provider costs several CPU seconds
// and, on a loaded machine, most of a minute, so a package whose tests
// each need the binary builds it once instead of once per test. Tests
// must only run the binary, never change or remove it; the package's
// TestMain calls RemoveSharedProvider after m.Run. moduleRoot must be the
// same on every call of one test binary.
func SharedProvider(t testing.TB, moduleRoot string) string {
	t.Helper()
	sharedBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "flotilla-provider-build-") //nolint:usetesting // outlives the first test; TestMain removes it
		if err != nil {
			sharedBuild.err = err
			return
		}
		sharedBuild.dir = dir
		bin := filepath.Join(dir, "terraform-provider-flotilla")
		if sharedBuild.err = goBuild(moduleRoot, bin); sharedBuild.err == nil {
			sharedBuild.bin = bin
		}
	})
	if sharedBuild.err != nil {
		t.Fatal(sharedBuild.err)
	}
	return sharedBuild.bin
}

// RemoveSharedProvider removes SharedProvider's build, if there was one;
// a package that calls SharedProvider calls it from TestMain after m.Run.
func RemoveSharedProvider() {
	if sharedBuild.dir != "" {
		_ = os.RemoveAll(sharedBuild.dir)
	}
}

// goBuild builds the module's main package at moduleRoot into bin, with
// flags before the package. SharedProvider builds the checkout itself
// without -trimpath, so it reuses the packages go test already compiled there.
func goBuild(moduleRoot, bin string, flags ...string) error {
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}
