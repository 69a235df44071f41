package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SourceURL is the repository the image's org.opencontainers.image.source
// label names.
const SourceURL = "https://github.com/flotilla-io/terraform-provider-flotilla"

// The OCI annotation keys written as image labels.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
)

// Options is one image build.
type Options struct {
	// Source is the checkout to build, with its version and time.
	Source Source
	// Arch is the GOARCH of the binary and the image; empty means the
	// machine's own.
	Arch string
	// WorkDir receives the built binary; empty means a temporary directory
	// that Build removes.
	WorkDir string
}

// Build builds the flotilla binary from opts.Source and assembles the
// image around it: two layers (the base files, then the binary), the
// non-root user, the binary as entrypoint with `help` as the default
// argument, and the OCI labels. It writes nothing but the binary.
func Build(ctx context.Context, opts Options) (v1.Image, error) {
	src := opts.Source
	if err := src.validate(); err != nil {
		return nil, err
	}
	arch := opts.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	work := opts.WorkDir
	if work == "" {
		dir, err := os.MkdirTemp("", "flotilla-image-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	binPath := filepath.Join(work, filepath.Base(BinaryPath))
	if err := buildBinary(ctx, src, arch, binPath); err != nil {
		return nil, err
	}
	binary, err := os.ReadFile(binPath)
	if err != nil {
		return nil, err
	}
	base, err := baseFiles()
	if err != nil {
		return nil, err
	}
	return assemble(src, arch, base, binaryFiles(binary))
}

// assemble is Build after the binary: the layers, the config and the
// manifest, all in OCI media types.
func assemble(src Source, arch string, layers ...[]file) (v1.Image, error) {
	created := v1.Time{Time: src.Time}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	steps := []string{"base files: /etc/passwd, /etc/group, CA bundle, home and /tmp", "the flotilla binary"}
	var adds []mutate.Addendum
	for i, files := range layers {
		data, err := layerTar(files, src.Time)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
		if err != nil {
			return nil, fmt.Errorf("image layer %d: %w", i, err)
		}
		adds = append(adds, mutate.Addendum{
			Layer:     layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: created, CreatedBy: "flotilla image: " + steps[i], Comment: "built without a container engine by internal/image"},
		})
	}
	img, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, fmt.Errorf("append image layers: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Created = created
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Config = v1.Config{
		User:       strconv.Itoa(UID) + ":" + strconv.Itoa(UID),
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"help"},
		WorkingDir: Home,
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + Home,
			"SSL_CERT_FILE=" + CAFile,
		},
		Labels: Labels(src),
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return img, nil
}

// Labels are the image's OCI labels for src.
func Labels(src Source) map[string]string {
	return map[string]string{
		LabelVersion:  src.Version,
		LabelRevision: src.Revision,
		LabelSource:   SourceURL,
		LabelCreated:  src.Time.UTC().Format("2006-01-02T15:04:05Z"),
		LabelTitle:    "flotilla",
	}
}
