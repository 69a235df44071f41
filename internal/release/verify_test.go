package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyRefuses builds a release directory by hand, breaks one thing
// per case, and checks that Verify names it. The unbroken directory fails
// only at the image, which it does not hold: the real build is checked by
// TestReleaseSnapshot.
func TestVerifyRefuses(t *testing.T) {
	const v = "1.2.3"
	cases := []struct {
		name    string
		breakIt func(t *testing.T, dir string)
		want    string
	}{
		{"nothing broken", func(*testing.T, string) {}, "read the image layout"},
		{"a version with a v", func(t *testing.T, dir string) { write(t, dir, "VERSION", "v1.2.3\n") }, `VERSION "v1.2.3" is not a SemVer version`},
		{"a zip changed after the checksums", func(t *testing.T, dir string) {
			writeZip(t, dir, "linux_amd64", Project+"_v"+v, "tampered")
		}, "_linux_amd64.zip: sha256"},
		{"a zip the checksums do not list", func(t *testing.T, dir string) {
			writeZip(t, dir, "darwin_arm64", Project+"_v"+v, "binary")
		}, "_darwin_arm64.zip is not in the checksums"},
		{"a zip named without the version", func(t *testing.T, dir string) {
			write(t, dir, "goreleaser/"+Project+"_linux_amd64.zip", "")
		}, "is not named " + Project + "_1.2.3_<os>_<arch>.zip"},
		{"a binary named without the version", func(t *testing.T, dir string) {
			writeZip(t, dir, "linux_amd64", Project, "binary")
			writeSums(t, dir)
		}, "want only " + Project + "_v1.2.3"},
		{"a manifest with another protocol", func(t *testing.T, dir string) {
			write(t, dir, "goreleaser/"+Project+"_"+v+"_manifest.json", `{"version":1,"metadata":{"protocol_versions":["5.0"]}}`)
			writeSums(t, dir)
		}, "want version 1 with protocol_versions [6.0]"},
		{"a chart left at another version", func(t *testing.T, dir string) {
			writeChart(t, dir, "flotilla-agent", v, "0.1.0")
		}, `appVersion "0.1.0", want both "1.2.3"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "VERSION", v+"\n")
			writeZip(t, dir, "linux_amd64", Project+"_v"+v, "binary")
			write(t, dir, "goreleaser/"+Project+"_"+v+"_manifest.json", `{"version":1,"metadata":{"protocol_versions":["6.0"]}}`)
			writeSums(t, dir)
			writeChart(t, dir, "flotilla", v, v)
			writeChart(t, dir, "flotilla-agent", v, v)
			c.breakIt(t, dir)
			_, err := Verify(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Verify: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeZip writes the provider zip for platform holding one file.
func writeZip(t *testing.T, dir, platform, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "goreleaser"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "goreleaser", Project+"_1.2.3_"+platform+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	w, err := z.Create(file)
	if err == nil {
		_, err = w.Write([]byte(content))
	}
	if err == nil {
		err = z.Close()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// writeSums writes the checksums of the manifest and the linux_amd64 zip.
func writeSums(t *testing.T, dir string) {
	t.Helper()
	var lines []string
	for _, name := range []string{Project + "_1.2.3_linux_amd64.zip", Project + "_1.2.3_manifest.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, "goreleaser", name))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(raw)
		lines = append(lines, hex.EncodeToString(h[:])+"  "+name)
	}
	write(t, dir, "goreleaser/"+Project+"_1.2.3_SHA256SUMS", strings.Join(lines, "\n")+"\n")
}

// writeChart writes a packaged chart holding only its Chart.yaml.
func writeChart(t *testing.T, dir, chart, version, appVersion string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "charts", chart+"-1.2.3.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	body := fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n", chart, version, appVersion)
	err = tw.WriteHeader(&tar.Header{Name: chart + "/Chart.yaml", Mode: 0o644, Size: int64(len(body))})
	if err == nil {
		_, err = tw.Write([]byte(body))
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err == nil {
			err = c.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
