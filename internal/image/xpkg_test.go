package image

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/xpkg/parser"
	pkgmetav1 "github.com/crossplane/crossplane/apis/v2/pkg/meta/v1"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// buildPackage builds the provider package the way `make xpkg` does (the
// image tarball as `make image` writes it, then BuildPackage with the
// repository's package/ and examples/crossplane) and reads it back.
func buildPackage(t *testing.T) (pkg, runtimeImg v1.Image, src Source, cli, path string) {
	t.Helper()
	cli = filepath.Join(testkit.CrossplaneTools(t, moduleRoot(t), "crossplane"), "crossplane")
	runtimeImg, _, src = sharedImage(t)
	dir := t.TempDir()
	tarPath := filepath.Join(dir, "flotilla-image.tar")
	if err := WriteTarball(tarPath, runtimeImg, "ghcr.io/flotilla-io/flotilla:"+Tag(src.Version)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "flotilla-provider.xpkg")
	root := moduleRoot(t)
	err := BuildPackage(t.Context(), PackageOptions{
		Crossplane:   cli,
		PackageRoot:  filepath.Join(root, "package"),
		ExamplesRoot: filepath.Join(root, "examples", "crossplane"),
		ImageTarball: tarPath,
		Out:          out,
	})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err = tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatalf("read the package %s: %v", out, err)
	}
	return pkg, runtimeImg, src, cli, out
}

// The xpkg layer annotations (crossplane-runtime's pkg/xpkg names; that
// package is not imported, as it brings cosign and the cloud SDKs into the
// module for three constants).
const (
	xpkgAnnotation    = "io.crossplane.xpkg"
	xpkgPackageLayer  = "base"    // package.yaml
	xpkgExamplesLayer = "upbound" // examples
)

// TestProviderPackage builds the Crossplane package and reads it as
// Crossplane does: the layer annotations `crossplane xpkg build` records
// in the config (push turns them into manifest annotations), package.yaml
// taken out by `crossplane xpkg extract --from-xpkg` (the CLI's reader of
// the base layer), parsed with crossplane-runtime's package parser and
// Crossplane's meta types and linted as a Provider package. The runtime
// image's layers and config are in the package unchanged, and the binary
// in it runs flotilla's `crossplane`.
func TestProviderPackage(t *testing.T) {
	pkg, runtimeImg, src, cli, path := buildPackage(t)
	m, err := pkg.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pkg.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	annotated := map[string]int{}
	for _, l := range m.Layers {
		if a, ok := cfg.Config.Labels[xpkgAnnotation+":"+l.Digest.String()]; ok {
			annotated[a]++
		}
	}
	if annotated[xpkgPackageLayer] != 1 || annotated[xpkgExamplesLayer] != 1 {
		t.Errorf("layer annotations %s: %v, want one %q (package.yaml) and one %q (examples)",
			xpkgAnnotation, annotated, xpkgPackageLayer, xpkgExamplesLayer)
	}

	// The runtime image is embedded: its layers first, its entrypoint.
	want, err := runtimeImg.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != len(want)+2 {
		t.Errorf("the package has %d layers, want the runtime image's %d, package.yaml and examples", len(m.Layers), len(want))
	}
	for i, l := range want {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if i < len(m.Layers) && m.Layers[i].Digest != d {
			t.Errorf("package layer %d is %s, want the runtime image's %s", i, m.Layers[i].Digest, d)
		}
	}
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != BinaryPath {
		t.Errorf("the package's entrypoint is %q, want the runtime image's %q", got, BinaryPath)
	}
	if cfg.Config.User != "65532:65532" || cfg.Config.Labels[LabelRevision] != src.Revision {
		t.Errorf("the package's config lost the runtime image's user or labels: user %q, labels %v", cfg.Config.User, cfg.Config.Labels)
	}

	checkPackageYAML(t, cli, path)
	checkPackageBinary(t, pkg, src)
	checkPush(t, cli, path)
}

// checkPush pushes the package as the crossplane guide says, with
// `crossplane xpkg push`, to a registry on loopback (go-containerregistry's
// in-memory registry), and reads it back as Crossplane's package manager
// pulls it: the pushed manifest carries the package layer's annotation.
func checkPush(t *testing.T, cli, path string) {
	t.Helper()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	ref := strings.TrimPrefix(reg.URL, "http://") + "/flotilla-io/provider-flotilla:v0.1.0"
	if out, err := exec.CommandContext(t.Context(), cli, "xpkg", "push", "-f", path, ref).CombinedOutput(); err != nil {
		t.Fatalf("crossplane xpkg push -f %s %s: %v\n%s", path, ref, err, out)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(tag, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	m, err := pulled.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	base := 0
	for _, l := range m.Layers {
		if l.Annotations[xpkgAnnotation] == xpkgPackageLayer {
			base++
		}
	}
	if base != 1 {
		t.Errorf("the pushed manifest has %d layers annotated %s=%s, want 1", base, xpkgAnnotation, xpkgPackageLayer)
	}
}

// checkPackageYAML extracts package.yaml with the crossplane CLI, parses
// and lints it as Crossplane's package manager does, and checks it holds
// package/crossplane.yaml's Provider and every CRD of package/crds.
func checkPackageYAML(t *testing.T, cli, path string) {
	t.Helper()
	gz := filepath.Join(t.TempDir(), "package.gz")
	if out, err := exec.CommandContext(t.Context(), cli, "xpkg", "extract", "--from-xpkg", path, "-o", gz).CombinedOutput(); err != nil {
		t.Fatalf("crossplane xpkg extract --from-xpkg %s: %v\n%s", path, err, out)
	}
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("crossplane xpkg extract wrote no gzip stream: %v", err)
	}
	metaScheme, objScheme := runtime.NewScheme(), runtime.NewScheme()
	if err := pkgmetav1.SchemeBuilder.AddToScheme(metaScheme); err != nil {
		t.Fatal(err)
	}
	if err := extv1.AddToScheme(objScheme); err != nil {
		t.Fatal(err)
	}
	p, err := parser.New(metaScheme, objScheme).Parse(t.Context(), rc)
	if err != nil {
		t.Fatalf("parse package.yaml: %v", err)
	}
	if err := providerLinter().Lint(p); err != nil {
		t.Errorf("the provider package fails linting: %v", err)
	}
	if meta := p.GetMeta(); len(meta) != 1 {
		t.Errorf("package.yaml has %d package metadata objects, want 1", len(meta))
	} else if prov, ok := meta[0].(*pkgmetav1.Provider); !ok || prov.GetName() != "provider-flotilla" {
		t.Errorf("package metadata is %T %v, want meta.pkg.crossplane.io/v1 Provider provider-flotilla", meta[0], meta[0])
	}
	var got []string
	for _, o := range p.GetObjects() {
		crd, ok := o.(*extv1.CustomResourceDefinition)
		if !ok {
			t.Errorf("package.yaml holds a %T, want only CRDs", o)
			continue
		}
		got = append(got, crd.Spec.Group+"_"+crd.Spec.Names.Plural+".yaml")
	}
	files, err := filepath.Glob(filepath.Join(moduleRoot(t), "package", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var wantFiles []string
	for _, f := range files {
		wantFiles = append(wantFiles, filepath.Base(f))
	}
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(wantFiles, " ") {
		t.Errorf("package.yaml's CRDs %v, want package/crds %v", got, wantFiles)
	}
}

// checkPackageBinary takes the entrypoint out of the package's filesystem
// and runs it as the provider Deployment would: `crossplane --help` is
// flotilla's provider, and `version` names the build's commit.
func checkPackageBinary(t *testing.T, img v1.Image, src Source) {
	t.Helper()
	bin := binaryOf(t, img)
	// flotilla's flag sets return flag.ErrHelp, which the binary exits
	// with as a usage error (2), as for any other bad flag.
	help, err := exec.CommandContext(t.Context(), bin, "crossplane", "--help").CombinedOutput()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 2) {
		t.Fatalf("%s crossplane --help: %v, want exit 0 or 2\n%s", BinaryPath, err, help)
	}
	for _, s := range []string{"Runs flotilla's Crossplane provider", "fleet.m.flotilla.io", "-install-crds"} {
		if !strings.Contains(string(help), s) {
			t.Errorf("crossplane --help lacks %q:\n%s", s, help)
		}
	}
	version, err := exec.CommandContext(t.Context(), bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", BinaryPath, err, version)
	}
	if !strings.Contains(string(version), src.Revision) {
		t.Errorf("version printed %q, want the revision %s", version, src.Revision)
	}
}

// providerLinter is crossplane-runtime's provider package linter
// (xpkg.NewProviderLinter) for what flotilla's package holds: exactly one
// meta object, a Provider, and otherwise CRDs.
func providerLinter() parser.Linter {
	return parser.NewPackageLinter(
		parser.PackageLinterFns(func(p parser.Lintable) error {
			if n := len(p.GetMeta()); n != 1 {
				return fmt.Errorf("%d package meta objects, want exactly one", n)
			}
			return nil
		}),
		parser.ObjectLinterFns(func(o runtime.Object) error {
			if _, ok := o.(*pkgmetav1.Provider); !ok {
				return fmt.Errorf("package meta type is %T, not Provider", o)
			}
			return nil
		}),
		parser.ObjectLinterFns(func(o runtime.Object) error {
			if _, ok := o.(*extv1.CustomResourceDefinition); !ok {
				return fmt.Errorf("object %T is not a CRD", o)
			}
			return nil
		}))
}
