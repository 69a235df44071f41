package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// StallProxy is a TLS reverse proxy in front of a cluster's apiserver that
// holds the requests its predicate picks until their client gives up (or
// the test ends), and passes every other request through: a member that
// answers its health checks and stalls on, say, discovery or writes, as a
// member with a hung aggregated API or a stuck admission webhook does.
type StallProxy struct {
	// URL is the proxy's https URL, to register instead of the cluster's.
	URL string
	// CAData is the PEM certificate the proxy serves with, to trust.
	CAData []byte

	held, seen, peak atomic.Int64
}

// Held is the number of requests being held now.
func (p *StallProxy) Held() int64 { return p.held.Load() }

// Seen is the number of requests held in all.
func (p *StallProxy) Seen() int64 { return p.seen.Load() }

// Peak is the most requests held at once.
func (p *StallProxy) Peak() int64 { return p.peak.Load() }

// StallProxy starts a proxy in front of the cluster that holds every
// request hold picks. It stops at the end of the test.
func (c *Cluster) StallProxy(t testing.TB, hold func(*http.Request) bool) *StallProxy {
	t.Helper()
	target, err := url.Parse(c.Host)
	if err != nil {
		t.Fatalf("testenv: stall proxy: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(c.CAData)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	p := &StallProxy{}
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hold(r) {
			rp.ServeHTTP(w, r)
			return
		}
		p.seen.Add(1)
		n := p.held.Add(1)
		for {
			peak := p.peak.Load()
			if n <= peak || p.peak.CompareAndSwap(peak, n) {
				break
			}
		}
		defer p.held.Add(-1)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	// Handlers still holding requests are released before Close waits
	// for them.
	t.Cleanup(func() { close(done); srv.Close() })
	p.URL = srv.URL
	p.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return p
}
