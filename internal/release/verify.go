package release

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// Project is the provider's name as the Terraform Registry spells it in
// every file name of a release.
const Project = "terraform-provider-flotilla"

// versionLabel is the OCI label the image and the package carry their
// version in.
const versionLabel = "org.opencontainers.image.version"

// refNameAnnotation names an image in an OCI layout's index.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// Release is what Verify found in a release directory.
type Release struct {
	// Version is the one version every artifact carries.
	Version string
	// Zips are the provider's per-platform zips, by "<os>_<arch>".
	Zips map[string]string
	// Sums is the SHA256SUMS file and Signature its detached signature, or
	// "" when the build was not signed.
	Sums, Signature string
	// Charts are the packaged charts' paths.
	Charts []string
}

// Zip returns the zip for goos and goarch, or "" when the release has none.
func (r Release) Zip(goos, goarch string) string { return r.Zips[goos+"_"+goarch] }

// Verify reads the release directory dir (scripts/release.sh's layout) and
// returns what it holds, or an error naming the first artifact whose
// layout, checksum or version is wrong.
func Verify(dir string) (Release, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "VERSION"))
	if err != nil {
		return Release{}, fmt.Errorf("read the release's version: %w", err)
	}
	r := Release{Version: strings.TrimSpace(string(raw)), Zips: map[string]string{}}
	if !semver.MatchString(r.Version) {
		return r, fmt.Errorf("VERSION %q is not a SemVer version without a leading v", r.Version)
	}
	if err := r.verifyProvider(filepath.Join(dir, "goreleaser")); err != nil {
		return r, err
	}
	if err := r.verifyCharts(filepath.Join(dir, "charts")); err != nil {
		return r, err
	}
	if err := r.verifyImage(dir); err != nil {
		return r, err
	}
	return r, nil
}

// semver is SemVer 2.0 without build metadata, as the registry and Helm take it.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// verifyProvider checks the registry layout: every zip and the manifest are
// in SHA256SUMS with their true digests, each zip holds the one binary
// named for the version, and the manifest declares protocol 6.0.
func (r *Release) verifyProvider(dir string) error {
	prefix := Project + "_" + r.Version + "_"
	r.Sums = filepath.Join(dir, prefix+"SHA256SUMS")
	sums, err := readSums(r.Sums)
	if err != nil {
		return err
	}
	if _, err := os.Stat(r.Sums + ".sig"); err == nil {
		r.Signature = r.Sums + ".sig"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".zip") {
			continue
		}
		platform, ok := strings.CutPrefix(strings.TrimSuffix(name, ".zip"), prefix)
		if !ok || strings.Count(platform, "_") != 1 {
			return fmt.Errorf("zip %s is not named %s<os>_<arch>.zip", name, prefix)
		}
		path := filepath.Join(dir, name)
		if err := checkSum(sums, path); err != nil {
			return err
		}
		goos := platform[:strings.Index(platform, "_")]
		if err := checkZip(path, r.binary(goos)); err != nil {
			return err
		}
		r.Zips[platform] = path
	}
	if len(r.Zips) == 0 {
		return fmt.Errorf("no provider zip named %s<os>_<arch>.zip in %s", prefix, dir)
	}
	manifest := filepath.Join(dir, prefix+"manifest.json")
	if err := checkSum(sums, manifest); err != nil {
		return err
	}
	var m struct {
		Version  int `json:"version"`
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	raw, err := os.ReadFile(manifest)
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil || m.Version != 1 || !slices.Equal(m.Metadata.ProtocolVersions, []string{"6.0"}) {
		return fmt.Errorf("registry manifest %s: want version 1 with protocol_versions [6.0], got %s (%v)", manifest, raw, err)
	}
	if len(sums) != len(r.Zips)+1 {
		return fmt.Errorf("%s lists %d files (%v), want the %d zips and the manifest", r.Sums, len(sums), slices.Sorted(maps.Keys(sums)), len(r.Zips))
	}
	return nil
}

// binary is the file name the registry expects inside a zip for goos.
func (r *Release) binary(goos string) string {
	name := Project + "_v" + r.Version
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// readSums parses a SHA256SUMS file: "<hex digest>  <file name>" per line.
func readSums(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the checksums: %w", err)
	}
	defer f.Close()
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		digest, name, ok := strings.Cut(s.Text(), "  ")
		if !ok || len(digest) != sha256.Size*2 {
			return nil, fmt.Errorf("%s: line %q is not \"<sha256>  <file>\"", path, s.Text())
		}
		sums[name] = digest
	}
	return sums, s.Err()
}

// checkSum fails unless sums lists path's base name with its SHA-256.
func checkSum(sums map[string]string, path string) error {
	want, ok := sums[filepath.Base(path)]
	if !ok {
		return fmt.Errorf("%s is not in the checksums", filepath.Base(path))
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha256 %s, the checksums say %s", filepath.Base(path), got, want)
	}
	return nil
}

// checkZip fails unless the zip holds exactly the one file binary.
func checkZip(path, binary string) error {
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", filepath.Base(path), err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{binary}) {
		return fmt.Errorf("%s holds %v, want only %s", filepath.Base(path), names, binary)
	}
	return nil
}

// verifyCharts checks that both charts are packaged with the release's
// version as their version and appVersion (the image tag they default to).
func (r *Release) verifyCharts(dir string) error {
	for _, chart := range []string{"flotilla", "flotilla-agent"} {
		path := filepath.Join(dir, chart+"-"+r.Version+".tgz")
		meta, err := chartMeta(path, chart)
		if err != nil {
			return err
		}
		if meta.Version != r.Version || meta.AppVersion != r.Version {
			return fmt.Errorf("chart %s: version %q, appVersion %q, want both %q", path, meta.Version, meta.AppVersion, r.Version)
		}
		r.Charts = append(r.Charts, path)
	}
	return nil
}

// chartMeta reads <chart>/Chart.yaml out of a packaged chart.
func chartMeta(path, chart string) (meta struct {
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
}, err error) {
	f, err := os.Open(path)
	if err != nil {
		return meta, fmt.Errorf("read the chart: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return meta, fmt.Errorf("chart %s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return meta, fmt.Errorf("chart %s has no %s/Chart.yaml", path, chart)
		}
		if err != nil {
			return meta, fmt.Errorf("chart %s: %w", path, err)
		}
		if h.Name != chart+"/Chart.yaml" {
			continue
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			return meta, err
		}
		return meta, yaml.Unmarshal(raw, &meta)
	}
}

// verifyImage checks the OCI layout's ref name and the image's version
// label, and the Crossplane package's runtime label, against the version.
func (r *Release) verifyImage(dir string) error {
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "image"))
	if err != nil {
		return fmt.Errorf("read the image layout: %w", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations[refNameAnnotation] != r.Version {
		return fmt.Errorf("image layout: want one image named %q, got %+v", r.Version, im.Manifests)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		return err
	}
	if err := labelled(img, "image", r.Version); err != nil {
		return err
	}
	tarPath := filepath.Join(dir, "flotilla-image_"+r.Version+".tar")
	tagged, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		return fmt.Errorf("read the image tarball: %w", err)
	}
	if err := labelled(tagged, "image tarball", r.Version); err != nil {
		return err
	}
	pkg, err := tarball.ImageFromPath(filepath.Join(dir, "flotilla-provider_"+r.Version+".xpkg"), nil)
	if err != nil {
		return fmt.Errorf("read the Crossplane package: %w", err)
	}
	return labelled(pkg, "Crossplane package", r.Version)
}

// labelled fails unless img's config carries version in its version label.
func labelled(img v1.Image, what, version string) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("read the %s's config: %w", what, err)
	}
	if got := cfg.Config.Labels[versionLabel]; got != version {
		return fmt.Errorf("the %s's label %s is %q, want %q", what, versionLabel, got, version)
	}
	return nil
}
