package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// TestSelfSignedCertRenews: the self-signed webhook certificate is renewed
// once two thirds of its lifetime have passed; the bundle installed first
// trusts both the certificate served until then and the next one, and the
// next one is served only after commit.
func TestSelfSignedCertRenews(t *testing.T) {
	s, err := newSelfSignedCert("https://127.0.0.1:9443")
	if err != nil {
		t.Fatal(err)
	}
	first := leafOf(t, s)
	if bundle, commit, err := s.rotate(time.Now()); err != nil || commit != nil || bundle != nil {
		t.Fatalf("rotate on a fresh certificate: bundle %d bytes, commit %v, err %v; want nothing due", len(bundle), commit != nil, err)
	}
	due := first.NotBefore.Add(first.NotAfter.Sub(first.NotBefore) * 2 / 3)
	if _, commit, _ := s.rotate(due.Add(-time.Minute)); commit != nil {
		t.Fatal("renewed a minute before two thirds of the lifetime")
	}
	bundle, commit, err := s.rotate(due)
	if err != nil || commit == nil {
		t.Fatalf("rotate when due: commit %v, err %v", commit != nil, err)
	}
	if n := countCerts(bundle); n != 2 {
		t.Fatalf("transition bundle holds %d certificates, want the next CA and the current one", n)
	}
	if leafOf(t, s).SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatal("the next certificate is served before its CA is installed")
	}
	commit()
	next := leafOf(t, s)
	if next.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("commit did not switch to the next certificate")
	}
	for name, leaf := range map[string]*x509.Certificate{"previous": first, "next": next} {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(bundle)
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots}); err != nil {
			t.Errorf("the transition bundle does not trust the %s certificate: %v", name, err)
		}
	}
	if countCerts(s.bundle()) != 1 {
		t.Error("after commit the bundle should be the next CA alone")
	}
	// The next certificate was made now, so its renewal is months away.
	if _, commit, _ := s.rotate(time.Now()); commit != nil {
		t.Error("renewed again right after a renewal")
	}
}

func leafOf(t *testing.T, s *selfSignedCert) *x509.Certificate {
	t.Helper()
	cert, err := s.current(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func countCerts(bundle []byte) int {
	n := 0
	for rest := bundle; ; n++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return n
		}
	}
}
