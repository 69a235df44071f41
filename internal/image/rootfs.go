package image

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The non-root user the image runs as: distroless' nonroot, so volumes
// and securityContexts written for those images fit this one too.
const (
	// UID is the numeric user (and group) the container runs as.
	UID = 65532
	// UserName is UID's name in /etc/passwd.
	UserName = "nonroot"
	// Home is UserName's home directory, the working directory.
	Home = "/home/nonroot"
	// CAFile is where the CA bundle lies; Go's crypto/x509 reads it there
	// first on Linux, and SSL_CERT_FILE names it for other programs.
	CAFile = "/etc/ssl/certs/ca-certificates.crt"
	// BinaryPath is the flotilla binary, the image's entrypoint.
	BinaryPath = "/usr/local/bin/terraform-provider-flotilla"
)

// file is one entry of a layer: a directory when data is nil and dir is set.
type file struct {
	path string // absolute, cleaned
	mode int64
	uid  int
	dir  bool
	data []byte
}

// baseFiles is the root filesystem under the binary: the user and group
// databases, the CA bundle and the writable directories (home, /tmp).
func baseFiles() ([]file, error) {
	cas, err := caBundle()
	if err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", UserName, UID, UID, UserName, Home)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", UserName, UID)
	return []file{
		{path: "/etc", mode: 0o755, dir: true},
		{path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "/etc/group", mode: 0o644, data: []byte(group)},
		{path: "/etc/ssl", mode: 0o755, dir: true},
		{path: "/etc/ssl/certs", mode: 0o755, dir: true},
		{path: CAFile, mode: 0o644, data: cas},
		{path: "/home", mode: 0o755, dir: true},
		{path: Home, mode: 0o700, uid: UID, dir: true},
		{path: "/tmp", mode: 0o1777, dir: true},
	}, nil
}

// binaryFiles places the binary at BinaryPath.
func binaryFiles(binary []byte) []file {
	return []file{
		{path: "/usr", mode: 0o755, dir: true},
		{path: "/usr/local", mode: 0o755, dir: true},
		{path: "/usr/local/bin", mode: 0o755, dir: true},
		{path: BinaryPath, mode: 0o755, data: binary},
	}
}

// caBundle is the PEM bundle of Mozilla's trusted roots as the Go project
// ships them in golang.org/x/crypto/x509roots/fallback (pinned in go.mod),
// so the image trusts the same roots wherever it is built. Roots that
// Mozilla trusts only with a constraint (a distrust-after date) are left
// out: a PEM file cannot carry the constraint.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, fmt.Errorf("encode CA certificate: %w", err)
		}
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("the CA bundle of golang.org/x/crypto/x509roots/fallback is empty")
	}
	return buf.Bytes(), nil
}

// layerTar writes files as an uncompressed tar in path order, every entry
// with mtime, owner uid:uid and no user or group names, so the same files
// always give the same bytes.
func layerTar(files []file, mtime time.Time) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.path, b.path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		name := strings.TrimPrefix(f.path, "/")
		h := &tar.Header{
			Name: name, Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: mtime,
			Typeflag: tar.TypeReg, Size: int64(len(f.data)), Format: tar.FormatPAX,
		}
		if f.dir {
			h.Name, h.Typeflag, h.Size = name+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close layer: %w", err)
	}
	return buf.Bytes(), nil
}
