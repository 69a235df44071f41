// Command flotilla-image builds flotilla's container image without a
// container engine (see internal/image) and writes it as an OCI layout and,
// optionally, a docker-loadable tarball. `make image` runs it:
//
//	go run ./internal/image/cmd/flotilla-image -layout bin/image -tar bin/flotilla-image.tar
//
// The version, revision and timestamps come from git (SOURCE_DATE_EPOCH
// overrides the time), so the same commit gives the same digest.
//
// With -xpkg it then builds the Crossplane provider package around the
// tarball (internal/image.BuildPackage, the crossplane CLI's xpkg build);
// `make xpkg` runs:
//
//	go run ./internal/image/cmd/flotilla-image -layout bin/image -tar bin/flotilla-image.tar -crossplane <tools>/crossplane -xpkg bin/flotilla-provider.xpkg
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/image"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "flotilla-image: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("flotilla-image", flag.ContinueOnError)
	dir := fs.String("dir", ".", "root of flotilla's Go module (a git checkout)")
	layoutDir := fs.String("layout", "bin/image", "`directory` of the OCI image layout to write (replaced)")
	tarPath := fs.String("tar", "", "also write a docker-loadable tarball at this `path`")
	repo := fs.String("repository", "ghcr.io/flotilla-io/flotilla", "image repository the tarball's tag names; the tag is the version")
	arch := fs.String("arch", "", "GOARCH of the image; default this machine's")
	version := fs.String("version", "", "version to stamp instead of git describe's")
	var pkg image.PackageOptions
	fs.StringVar(&pkg.Out, "xpkg", "", "also build the Crossplane provider package at this `path`, with the -tar tarball as its runtime image")
	fs.StringVar(&pkg.Crossplane, "crossplane", "crossplane", "`path` of the crossplane CLI, for -xpkg")
	fs.StringVar(&pkg.PackageRoot, "package-root", "package", "`directory` holding crossplane.yaml and the CRDs, for -xpkg")
	fs.StringVar(&pkg.ExamplesRoot, "examples-root", "examples/crossplane", "`directory` of the package's example manifests, for -xpkg")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if pkg.Out != "" && *tarPath == "" {
		return errors.New("-xpkg embeds the image tarball: set -tar too")
	}
	src, err := image.FromGit(ctx, *dir)
	if err != nil {
		return err
	}
	if *version != "" {
		src.Version = *version
	}
	img, err := image.Build(ctx, image.Options{Source: src, Arch: *arch})
	if err != nil {
		return err
	}
	if err := image.WriteLayout(*layoutDir, img, src.Version); err != nil {
		return err
	}
	if *tarPath != "" {
		if err := image.WriteTarball(*tarPath, img, *repo+":"+image.Tag(src.Version)); err != nil {
			return err
		}
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "image %s:%s %s (revision %s, created %s)\n  oci layout: %s\n", *repo, image.Tag(src.Version), digest, src.Revision, src.Time.Format("2006-01-02T15:04:05Z"), *layoutDir)
	if *tarPath != "" {
		fmt.Fprintf(stdout, "  tarball:    %s\n", *tarPath)
	}
	if pkg.Out == "" {
		return nil
	}
	pkg.ImageTarball = *tarPath
	if err := image.BuildPackage(ctx, pkg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  crossplane package: %s\n", pkg.Out)
	return nil
}
