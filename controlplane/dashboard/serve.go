package dashboard

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Options turn the dashboard on and say how it is served.
type Options struct {
	// BindAddress is the host:port of the HTTPS listener; empty or "0"
	// leaves the dashboard off.
	BindAddress string
	// CertDir holds tls.crt and tls.key (a cert-manager Certificate's
	// Secret), reloaded on change; empty serves a self-signed certificate
	// made at start.
	CertDir string
	// Refresh is how often an open page refreshes; DefaultRefresh when 0.
	Refresh time.Duration
	// Probes are the Push clusters' last successful probes, recorded by
	// the cluster status controller of the same process (nil: none).
	Probes ProbeSource
}

// Enabled reports whether the options turn the dashboard on.
func (o Options) Enabled() bool { return o.BindAddress != "" && o.BindAddress != "0" }

// Add serves the dashboard from mgr's informer cache while mgr runs, in
// every replica (a standby's cache is as current as the leader's), when o
// turns it on.
func Add(mgr manager.Manager, o Options) error {
	if !o.Enabled() {
		return nil
	}
	watches, err := NewWatches(mgr.GetConfig(), mgr.GetHTTPClient(), 0)
	if err != nil {
		return err
	}
	if err := mgr.Add(watches); err != nil {
		return fmt.Errorf("dashboard: add watches: %w", err)
	}
	// Elected is closed once this replica leads (at once without leader
	// election): from then its controllers probe the members.
	elected := mgr.Elected()
	leading := func() bool {
		select {
		case <-elected:
			return true
		default:
			return false
		}
	}
	s, err := New(mgr.GetConfig(), mgr.GetHTTPClient(), Sources{
		Cache: mgr.GetCache(), Templates: mgr.GetCache(), API: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(), Watches: watches,
		Probes: o.Probes, Leading: leading,
	}, o.Refresh)
	if err != nil {
		return err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CertDir != "" {
		w, err := certwatcher.New(filepath.Join(o.CertDir, "tls.crt"), filepath.Join(o.CertDir, "tls.key"))
		if err != nil {
			return fmt.Errorf("dashboard: load certificate from %s: %w", o.CertDir, err)
		}
		if err := mgr.Add(w); err != nil {
			return fmt.Errorf("dashboard: watch certificate: %w", err)
		}
		cfg.GetCertificate = w.GetCertificate
	} else {
		host, _, _ := net.SplitHostPort(o.BindAddress)
		if host == "" {
			host = "localhost"
		}
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
		if err != nil {
			return fmt.Errorf("dashboard: self-signed certificate: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("dashboard: self-signed certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return mgr.Add(&runnable{addr: o.BindAddress, handler: s.Handler(), tls: cfg})
}

// runnable is the dashboard's HTTPS server as a manager runnable.
type runnable struct {
	addr    string
	handler http.Handler
	tls     *tls.Config
}

// NeedLeaderElection is false: every replica serves from its own cache.
func (r *runnable) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (r *runnable) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen on %s: %w", r.addr, err)
	}
	srv := &http.Server{Handler: r.handler, TLSConfig: r.tls, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(tls.NewListener(ln, r.tls)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard: serve: %w", err)
	}
	return nil
}
