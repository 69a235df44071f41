package image

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTag(t *testing.T) {
	for _, tc := range []struct{ version, want string }{
		{"v1.2.3", "v1.2.3"},
		{"v1.2.3-4-g0123456789ab-dirty", "v1.2.3-4-g0123456789ab-dirty"},
		{"0123456789ab", "0123456789ab"},
		{"v1.0.0+build.5", "v1.0.0-build.5"},
		{".hidden", "_hidden"},
		{"", "latest"},
		{string(bytes.Repeat([]byte("a"), 200)), string(bytes.Repeat([]byte("a"), 128))},
	} {
		if got := Tag(tc.version); got != tc.want {
			t.Errorf("Tag(%q) = %q, want %q", tc.version, got, tc.want)
		}
	}
}

// TestLayerTarIsDeterministic: the same files in any order give the same
// bytes, entries come sorted with the fixed time, owner and mode.
func TestLayerTarIsDeterministic(t *testing.T) {
	mtime := time.Unix(1700000000, 0).UTC()
	files := []file{
		{path: "/b/file", mode: 0o644, data: []byte("b")},
		{path: "/b", mode: 0o755, dir: true},
		{path: "/a", mode: 0o700, uid: UID, dir: true},
	}
	one, err := layerTar(files, mtime)
	if err != nil {
		t.Fatal(err)
	}
	two, err := layerTar([]file{files[2], files[0], files[1]}, mtime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, two) {
		t.Fatal("the same files in another order gave another tar")
	}
	type entry struct {
		Name     string
		Mode     int64
		UID, GID int
		Dir      bool
		ModTime  time.Time
		Data     string
	}
	var got []entry
	tr := tar.NewReader(bytes.NewReader(one))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, entry{h.Name, h.Mode, h.Uid, h.Gid, h.Typeflag == tar.TypeDir, h.ModTime.UTC(), string(data)})
	}
	want := []entry{
		{"a/", 0o700, UID, UID, true, mtime, ""},
		{"b/", 0o755, 0, 0, true, mtime, ""},
		{"b/file", 0o644, 0, 0, false, mtime, "b"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tar entries (-want +got):\n%s", d)
	}
}

// TestCABundle: the bundle is PEM that Go's x509 parses, with Mozilla's
// roots (well over a hundred of them).
func TestCABundle(t *testing.T) {
	pemBytes, err := caBundle()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rest := pemBytes; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 {
		t.Errorf("the CA bundle has %d certificates, want Mozilla's 100+", n)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pemBytes) {
		t.Error("x509 takes no certificate from the bundle")
	}
}
