package image

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// built is the image the tests share, built once per test binary the way
// `make image` builds it (FromGit, Build, WriteLayout), since building the
// binary is what costs.
var built struct {
	once sync.Once
	root string // temporary directory holding the layout
	src  Source
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.root != "" {
		_ = os.RemoveAll(built.root)
	}
	os.Exit(code)
}

// moduleRoot is flotilla's module root, two levels up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildLayout runs the same steps as `make image` into dir/image and
// returns the layout's path.
func buildLayout(ctx context.Context, src Source, dir string) (string, error) {
	img, err := Build(ctx, Options{Source: src, WorkDir: dir})
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "image")
	return out, WriteLayout(out, img, src.Version)
}

// sharedImage builds the shared image on first use and reads it back from
// its OCI layout with go-containerregistry.
func sharedImage(t *testing.T) (v1.Image, v1.Descriptor, Source) {
	t.Helper()
	root := moduleRoot(t)
	built.once.Do(func() {
		// Not t.Context nor t.TempDir: the image outlives the first test
		// that asks for it (TestMain removes it).
		built.src, built.err = FromGit(context.Background(), root) //nolint:usetesting // shared by the package's tests
		if built.err != nil {
			return
		}
		built.root, built.err = os.MkdirTemp("", "flotilla-image-test-") //nolint:usetesting // shared by the package's tests
		if built.err != nil {
			return
		}
		start := time.Now()
		_, built.err = buildLayout(context.Background(), built.src, built.root) //nolint:usetesting // shared by the package's tests
		t.Logf("image built in %s", time.Since(start).Round(time.Millisecond))
	})
	if built.err != nil {
		t.Fatalf("build the image: %v", built.err)
	}
	img, desc := readLayout(t, filepath.Join(built.root, "image"))
	return img, desc, built.src
}

// readLayout opens the one image of an OCI layout and returns it with its
// index descriptor.
func readLayout(t *testing.T, dir string) (v1.Image, v1.Descriptor) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("read oci layout %s: %v", dir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("the layout's index lists %d manifests, want 1", len(im.Manifests))
	}
	desc := im.Manifests[0]
	img, err := idx.Image(desc.Digest)
	if err != nil {
		t.Fatalf("image %s: %v", desc.Digest, err)
	}
	return img, desc
}

// TestImageConfig reads the image back and checks what a runtime sees:
// OCI media types, the non-root user, the entrypoint, the labels and the
// timestamps, all from the commit.
func TestImageConfig(t *testing.T) {
	img, desc, src := sharedImage(t)
	if desc.MediaType != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s, want %s", desc.MediaType, types.OCIManifestSchema1)
	}
	if got := desc.Annotations[RefNameAnnotation]; got != src.Version {
		t.Errorf("layout ref name %q, want the version %q", got, src.Version)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("config media type %s, want %s", m.Config.MediaType, types.OCIConfigJSON)
	}
	if len(m.Layers) != 2 {
		t.Errorf("%d layers, want 2 (base files, binary)", len(m.Layers))
	}
	for i, l := range m.Layers {
		if l.MediaType != types.OCILayer {
			t.Errorf("layer %d media type %s, want %s", i, l.MediaType, types.OCILayer)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	// Independent of FromGit: git itself, asked here.
	rev := gitOut(t, "rev-parse", "HEAD")
	epoch, err := strconv.ParseInt(gitOut(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(SourceDateEpochEnv) == "" && !cfg.Created.Time.Equal(time.Unix(epoch, 0)) {
		t.Errorf("created %s, want the commit time %s", cfg.Created.Time, time.Unix(epoch, 0).UTC())
	}
	for i, h := range cfg.History {
		if !h.Created.Time.Equal(cfg.Created.Time) {
			t.Errorf("history %d created %s, want %s", i, h.Created.Time, cfg.Created.Time)
		}
	}
	checks := []struct{ what, got, want string }{
		{"os", cfg.OS, "linux"},
		{"user", cfg.Config.User, "65532:65532"},
		{"entrypoint", strings.Join(cfg.Config.Entrypoint, " "), "/usr/local/bin/terraform-provider-flotilla"},
		{"cmd", strings.Join(cfg.Config.Cmd, " "), "help"},
		{"label version", cfg.Config.Labels["org.opencontainers.image.version"], src.Version},
		{"label revision", cfg.Config.Labels["org.opencontainers.image.revision"], rev},
		{"label source", cfg.Config.Labels["org.opencontainers.image.source"], "https://github.com/flotilla-io/terraform-provider-flotilla"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if !strings.HasPrefix(src.Version, rev[:12]) && !strings.HasPrefix(src.Version, "v") {
		t.Errorf("version %q is neither a tag nor the commit %s", src.Version, rev[:12])
	}
}

// TestImageFiles extracts the image's filesystem and checks the user
// database, the CA bundle, the directories the user writes and the binary.
func TestImageFiles(t *testing.T) {
	img, _, _ := sharedImage(t)
	files := extract(t, img)
	passwd := string(files["etc/passwd"].data)
	if !strings.Contains(passwd, "\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n") {
		t.Errorf("/etc/passwd lacks the nonroot user 65532:\n%s", passwd)
	}
	if !strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("/etc/group lacks group 65532:\n%s", files["etc/group"].data)
	}
	if n := strings.Count(string(files["etc/ssl/certs/ca-certificates.crt"].data), "BEGIN CERTIFICATE"); n < 100 {
		t.Errorf("the CA bundle has %d certificates, want 100+", n)
	}
	for _, c := range []struct {
		path string
		mode int64
		uid  int
	}{
		{"home/nonroot", 0o700, 65532},
		{"tmp", 0o1777, 0},
		{"usr/local/bin/terraform-provider-flotilla", 0o755, 0},
	} {
		f, ok := files[c.path]
		if !ok {
			t.Errorf("the image lacks %s", c.path)
			continue
		}
		if f.mode != c.mode || f.uid != c.uid {
			t.Errorf("%s: mode %o uid %d, want mode %o uid %d", c.path, f.mode, f.uid, c.mode, c.uid)
		}
	}
	if bin := files["usr/local/bin/terraform-provider-flotilla"].data; len(bin) < 4 || string(bin[:4]) != "\x7fELF" {
		t.Error("the entrypoint is not an ELF binary")
	}
}

type extracted struct {
	mode int64
	uid  int
	data []byte
}

// extract flattens the image's layers (go-containerregistry's
// mutate.Extract) into path → file.
func extract(t *testing.T, img v1.Image) map[string]extracted {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]extracted{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("extract the image: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = extracted{mode: h.Mode, uid: h.Uid, data: data}
	}
}

// imageBinary writes the image's entrypoint binary to a file and returns
// its path.
func imageBinary(t *testing.T) (string, Source) {
	t.Helper()
	img, _, src := sharedImage(t)
	return binaryOf(t, img), src
}

// binaryOf writes the entrypoint binary in img's filesystem (the image's,
// or the Crossplane package's that embeds it) to a file and returns its
// path.
func binaryOf(t *testing.T, img v1.Image) string {
	t.Helper()
	f, ok := extract(t, img)[strings.TrimPrefix(BinaryPath, "/")]
	if !ok {
		t.Fatalf("the image lacks %s", BinaryPath)
	}
	path := filepath.Join(t.TempDir(), "flotilla")
	if err := os.WriteFile(path, f.data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImageBinaryVersion runs the binary taken from the image: it is
// static (it runs without the build's libraries) and carries the version
// and revision of the commit; `help`, the default argument, names the
// subcommands.
func TestImageBinaryVersion(t *testing.T) {
	bin, src := imageBinary(t)
	out, err := exec.CommandContext(t.Context(), bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	want := fmt.Sprintf("terraform-provider-flotilla %s (%s)\n", src.Version, gitOut(t, "rev-parse", "HEAD"))
	if string(out) != want {
		t.Errorf("version printed %q, want %q", out, want)
	}
	// The image's default argument: the usage, naming the subcommands the
	// container's arguments choose.
	help, err := exec.CommandContext(t.Context(), bin, "help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s help: %v\n%s", bin, err, help)
	}
	for _, sub := range []string{"controlplane --kubeconfig", "crossplane [--kubeconfig", "agent --hub-kubeconfig", "register --hub-kubeconfig"} {
		if !strings.Contains(string(help), sub) {
			t.Errorf("help lacks %q:\n%s", sub, help)
		}
	}
	// A pull-mode member's agent runs from the same image.
	if out, err := exec.CommandContext(t.Context(), bin, "agent", "-h").CombinedOutput(); err != nil || !strings.Contains(string(out), "-cluster-name") {
		t.Errorf("%s agent -h: %v\n%s", bin, err, out)
	}
	if out, err := exec.CommandContext(t.Context(), "go", "version", "-m", bin).CombinedOutput(); err != nil {
		t.Errorf("go version -m: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "CGO_ENABLED=0") || !strings.Contains(string(out), "-trimpath=true") {
		t.Errorf("the binary was not built static with -trimpath:\n%s", out)
	}
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...)
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
