// Command flotilla-xpkg builds flotilla's Crossplane provider package with
// the crossplane CLI, embedding the runtime image that `make image` wrote
// (see internal/image.BuildPackage). `make xpkg` runs it:
//
//	go run ./internal/image/cmd/flotilla-xpkg -crossplane <tools>/crossplane -o bin/flotilla-provider.xpkg
package main

import (
	"context"
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
		fmt.Fprintf(os.Stderr, "flotilla-xpkg: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("flotilla-xpkg", flag.ContinueOnError)
	var opts image.PackageOptions
	fs.StringVar(&opts.Crossplane, "crossplane", "crossplane", "`path` of the crossplane CLI")
	fs.StringVar(&opts.PackageRoot, "package-root", "package", "`directory` holding crossplane.yaml and the CRDs")
	fs.StringVar(&opts.ExamplesRoot, "examples-root", "examples/crossplane", "`directory` of example manifests to include")
	fs.StringVar(&opts.ImageTarball, "image", "bin/flotilla-image.tar", "runtime image tarball `path` (make image)")
	fs.StringVar(&opts.Out, "o", "bin/flotilla-provider.xpkg", "package file `path` to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := image.BuildPackage(ctx, opts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "crossplane package %s (runtime image %s)\n", opts.Out, opts.ImageTarball)
	return nil
}
