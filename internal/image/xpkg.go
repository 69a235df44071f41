package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// PackageOptions is one build of flotilla's Crossplane provider package.
type PackageOptions struct {
	// Crossplane is the crossplane CLI (`make tools` builds it pinned).
	Crossplane string
	// PackageRoot holds crossplane.yaml and the CRDs (package/).
	PackageRoot string
	// ExamplesRoot holds the example manifests shown beside the package
	// (examples/crossplane); they go into their own layer.
	ExamplesRoot string
	// ImageTarball is the runtime image as a docker-loadable tarball, as
	// WriteTarball (`make image`) writes it.
	ImageTarball string
	// Out is the package file to write.
	Out string
}

// BuildPackage runs `crossplane xpkg build`, which lints the package's
// YAML as Crossplane's package manager would and writes an OCI image
// tarball: the runtime image's layers and config (its entrypoint runs
// `crossplane` from the Deployment's arguments) with the package.yaml layer
// on top, so installing the package also runs flotilla's provider.
func BuildPackage(ctx context.Context, opts PackageOptions) error {
	for _, f := range []struct{ name, path string }{
		{"crossplane CLI", opts.Crossplane},
		{"package root", opts.PackageRoot},
		{"examples root", opts.ExamplesRoot},
		{"runtime image tarball", opts.ImageTarball},
	} {
		if f.path == "" {
			return fmt.Errorf("xpkg build: the %s is not set", f.name)
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("xpkg build: %s: %w", f.name, err)
		}
	}
	if opts.Out == "" {
		return errors.New("xpkg build: the output file is not set")
	}
	if err := os.MkdirAll(filepath.Dir(opts.Out), 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, opts.Crossplane, "xpkg", "build",
		"--package-root="+opts.PackageRoot,
		"--examples-root="+opts.ExamplesRoot,
		"--embed-runtime-image-tarball="+opts.ImageTarball,
		"--package-file="+opts.Out)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("crossplane xpkg build of %s with runtime image %s: %w\n%s", opts.PackageRoot, opts.ImageTarball, err, out)
	}
	return nil
}
