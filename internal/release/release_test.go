package release_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/release"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestReleaseSnapshot runs `make release-snapshot`'s script as a release
// would, for this machine's platform and signed with a throwaway GPG key,
// and checks what a registry and a user get: the layout and checksums, one
// version in every artifact, a signature gpg verifies, and a zipped binary
// that runs and names that version and the commit.
func TestReleaseSnapshot(t *testing.T) {
	root := moduleRoot(t)
	goreleaser := testkit.Goreleaser(t, root)
	helm := testkit.Helm(t, root)
	crossplane := filepath.Join(testkit.CrossplaneTools(t, root, "crossplane"), "crossplane")
	gnupg, fingerprint := signingKey(t)

	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", "scripts/release.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"GORELEASER="+goreleaser, "HELM="+helm, "CROSSPLANE="+crossplane,
		"RELEASE_DIR="+dir, "RELEASE_SINGLE_TARGET=1",
		"GNUPGHOME="+gnupg, "GPG_FINGERPRINT="+fingerprint)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}

	r, err := release.Verify(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(run(t, root, "bash", "scripts/version.sh"))
	if r.Version != want {
		t.Errorf("release version %q, scripts/version.sh says %q", r.Version, want)
	}
	if r.Signature == "" {
		t.Fatal("the checksums were not signed although GPG_FINGERPRINT was set")
	}
	verify := exec.CommandContext(t.Context(), "gpg", "--batch", "--verify", r.Signature, r.Sums)
	verify.Env = append(os.Environ(), "GNUPGHOME="+gnupg)
	if out, err := verify.CombinedOutput(); err != nil {
		t.Errorf("gpg --verify of the checksums: %v\n%s", err, out)
	}

	zipped := r.Zip(runtime.GOOS, runtime.GOARCH)
	if zipped == "" {
		t.Fatalf("no zip for %s_%s among %v", runtime.GOOS, runtime.GOARCH, r.Zips)
	}
	bin := unzip(t, zipped)
	commit := strings.TrimSpace(run(t, root, "git", "rev-parse", "HEAD"))
	if got, want := run(t, root, bin, "version"), "terraform-provider-flotilla "+r.Version+" ("+commit+")\n"; got != want {
		t.Errorf("the zipped binary's version: %q, want %q", got, want)
	}
}

// signingKey makes a throwaway RSA key (the kind the Terraform Registry
// takes) in its own GPG home and returns the home and the key's fingerprint.
func signingKey(t *testing.T) (home, fingerprint string) {
	t.Helper()
	home = t.TempDir()
	gpg := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), "gpg", append([]string{"--batch", "--homedir", home}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("gpg %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
	})
	gpg("--passphrase", "", "--quick-gen-key", "flotilla release test <release-test@flotilla.invalid>", "rsa2048", "sign", "never")
	for line := range strings.SplitSeq(gpg("--with-colons", "--list-secret-keys"), "\n") {
		if f := strings.Split(line, ":"); f[0] == "fpr" && len(f) > 9 {
			return home, f[9]
		}
	}
	t.Fatal("gpg made no key")
	return "", ""
}

// unzip extracts the one binary of a provider zip and returns its path.
func unzip(t *testing.T, path string) string {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := z.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := filepath.Join(t.TempDir(), z.File[0].Name)
	w, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, f); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// run runs name with args in dir and returns its standard output.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// moduleRoot is the repository root, two levels up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
