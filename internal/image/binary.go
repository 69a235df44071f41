package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// versionPackage holds the variables the linker sets (internal/version).
const versionPackage = "github.com/flotilla-io/terraform-provider-flotilla/internal/version"

// buildBinary builds the flotilla binary of src for linux/arch into out:
// static (no cgo), with -trimpath, no VCS stamp and an empty build ID so the
// same source and toolchain give the same bytes whatever and wherever the
// checkout is, stripped, and with the version and revision linked in.
func buildBinary(ctx context.Context, src Source, arch, out string) error {
	ldflags := strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", versionPackage + ".Version=" + src.Version,
		"-X", versionPackage + ".Commit=" + src.Revision,
	}, " ")
	// -buildvcs=false: go stamps VCS facts in a plain clone but not in a
	// git worktree, so stamping would make two checkouts of one commit
	// differ; the version and revision are linked in instead.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, ".")
	cmd.Dir = src.Dir
	// The environment's own GOFLAGS (say -race, which needs cgo) must not
	// change the binary; GOFLAGS=-mod=readonly fails rather than edits go.mod.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=-mod=readonly")
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of %s for linux/%s: %w\n%s", src.Dir, arch, err, output)
	}
	return nil
}
