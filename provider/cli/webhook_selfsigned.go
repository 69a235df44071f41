package cli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
)

// selfSignedCert is the webhook's serving certificate when no
// --webhook-cert-dir is given: made in memory for the --webhook-url host and
// renewed by the process itself before it expires, so a control plane that
// runs for longer than the certificate's lifetime keeps its webhook.
type selfSignedCert struct {
	url string

	mu   sync.Mutex
	cert *tls.Certificate
	ca   []byte
	// renewAt is when two thirds of the certificate's lifetime have passed.
	renewAt time.Time
}

func newSelfSignedCert(url string) (*selfSignedCert, error) {
	s := &selfSignedCert{url: url}
	cert, ca, renewAt, err := s.generate()
	if err != nil {
		return nil, err
	}
	s.cert, s.ca, s.renewAt = cert, ca, renewAt
	return s, nil
}

// current is the certificate to serve now (tls.Config.GetCertificate).
func (s *selfSignedCert) current(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cert, nil
}

// bundle is the CA bundle that trusts the certificate served now.
func (s *selfSignedCert) bundle() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ca
}

// rotate makes the next certificate once it is due. It returns the CA
// bundle to install, which trusts both the certificate served now and the
// next one, and commit, which starts serving the next one: the host must
// trust a certificate before it is served. commit is nil when nothing is due.
func (s *selfSignedCert) rotate(now time.Time) ([]byte, func(), error) {
	s.mu.Lock()
	due := !now.Before(s.renewAt)
	old := s.ca
	s.mu.Unlock()
	if !due {
		return nil, nil, nil
	}
	cert, ca, renewAt, err := s.generate()
	if err != nil {
		return nil, nil, err
	}
	bundle := append(bytes.Clone(ca), old...)
	commit := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cert, s.ca, s.renewAt = cert, ca, renewAt
	}
	return bundle, commit, nil
}

func (s *selfSignedCert) generate() (*tls.Certificate, []byte, time.Time, error) {
	cert, ca, err := webhook.ServingCertificate(s.url)
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("--webhook-url: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("parse the webhook serving certificate: %w", err)
	}
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	return &cert, ca, leaf.NotBefore.Add(life * 2 / 3), nil
}
