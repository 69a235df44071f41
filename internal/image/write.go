package image

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// RefNameAnnotation is the OCI layout annotation that names an image in
// index.json (the tag, as skopeo and crane read it).
const RefNameAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout writes img as an OCI image layout at dir, replacing whatever
// was there, with tag as its ref name. It writes into a sibling directory
// and renames it into place, so dir never holds half an image.
func WriteLayout(dir string, img v1.Image, tag string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{RefNameAnnotation: tag})); err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	// MkdirTemp made it 0700; a layout is read by other users' tools too.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// WriteTarball writes img as a `docker save` style tarball at path, named
// ref (repository:tag), for `docker load`, `kind load image-archive` or
// `crane push`.
func WriteTarball(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("image tarball %s: %w", path, err)
	}
	return nil
}

// Tag turns a version into an image tag: characters a tag cannot hold
// ([A-Za-z0-9_.-] only, not first '.' or '-') become '-', and it is cut
// to 128 characters.
func Tag(version string) string {
	out := []byte(version)
	for i, c := range out {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' ||
			(i > 0 && (c == '.' || c == '-'))
		if !ok {
			out[i] = '-'
			if i == 0 {
				out[i] = '_'
			}
		}
	}
	if len(out) > 128 {
		out = out[:128]
	}
	if len(out) == 0 {
		return "latest"
	}
	return string(out)
}
