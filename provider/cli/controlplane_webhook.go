package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
)

// webhookConfig is the validating webhook's part of the controlplane flags.
type webhookConfig struct {
	// url is the address the host apiserver calls; empty turns the webhook off.
	url string
	// bindAddress is where the webhook server listens, host:port.
	bindAddress string
	// failurePolicy is Fail or Ignore.
	failurePolicy string
	// external leaves the ValidatingWebhookConfiguration to something
	// else (the Helm chart, with a Service reference); it needs certDir: a
	// per-process certificate is one nothing else can trust.
	external bool
	// rules configures the ResourceBinding and Work handlers.
	rules webhook.Options
	// certDir holds tls.crt, tls.key and ca.crt, as a cert-manager
	// Certificate's Secret mounted into every replica does. Empty makes a
	// self-signed certificate per process, fit for one replica only.
	certDir string
	// maxInFlight bounds the admission reviews handled at once.
	maxInFlight int
	// client is how the server verifies its caller, the host apiserver.
	client webhookClientAuth
	// selfSigned is that certificate, renewed before it expires; set by
	// webhookServer when certDir is empty.
	selfSigned *selfSignedCert
}

// The file names of a kubernetes.io/tls Secret as cert-manager writes it.
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
	caFile   = "ca.crt"
)

// caRecheck is how often the leader rereads ca.crt to reinstall a rotated
// CA bundle (the serving certificate itself is reloaded by
// controller-runtime's certwatcher as soon as the files change), or checks
// whether its self-signed certificate is due for renewal.
var caRecheck = 30 * time.Second

// webhookServer returns the manager's webhook server, serving a
// certificate made for the host of c.url, and the CA bundle that trusts it;
// nil when the webhook is off.
func (c *webhookConfig) webhookServer() (crwebhook.Server, []byte, error) {
	if c.url == "" {
		return nil, nil, nil
	}
	switch admissionregistrationv1.FailurePolicyType(c.failurePolicy) {
	case admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
	default:
		return nil, nil, fmt.Errorf("--webhook-failure-policy %q: must be Fail or Ignore", c.failurePolicy)
	}
	host, portText, err := net.SplitHostPort(c.bindAddress)
	if err != nil {
		return nil, nil, fmt.Errorf("--webhook-bind-address %q: %w", c.bindAddress, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 {
		return nil, nil, fmt.Errorf("--webhook-bind-address %q: the port must be a positive number", c.bindAddress)
	}
	if err := c.client.check(); err != nil {
		return nil, nil, err
	}
	if c.external && c.certDir == "" {
		return nil, nil, fmt.Errorf("--webhook-install=false needs --webhook-cert-dir: the ValidatingWebhookConfiguration installed by other means must trust a certificate it knows")
	}
	if c.certDir != "" {
		ca, err := c.sharedCertificate()
		if err != nil {
			return nil, nil, err
		}
		// CertDir makes controller-runtime serve through its certwatcher,
		// which reloads tls.crt and tls.key when they are rotated.
		srv, err := c.client.server(crwebhook.Options{
			Host: host, Port: port, CertDir: c.certDir, CertName: certFile, KeyName: keyFile,
		})
		return srv, ca, err
	}
	ss, err := newSelfSignedCert(c.url)
	if err != nil {
		return nil, nil, err
	}
	c.selfSigned = ss
	srv, err := c.client.server(crwebhook.Options{
		Host: host, Port: port,
		TLSOpts: []func(*tls.Config){func(t *tls.Config) { t.GetCertificate = ss.current }},
	})
	if err != nil {
		return nil, nil, err
	}
	return srv, ss.bundle(), nil
}

// sharedCertificate checks the certificate in certDir and returns its CA
// bundle: the key pair must load, ca.crt must hold a certificate, and the
// serving certificate must chain to it, so a replica refuses to start
// rather than serve something the host will not trust.
func (c webhookConfig) sharedCertificate() ([]byte, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(c.certDir, certFile), filepath.Join(c.certDir, keyFile))
	if err != nil {
		return nil, fmt.Errorf("--webhook-cert-dir %s: load %s and %s: %w", c.certDir, certFile, keyFile, err)
	}
	ca, err := os.ReadFile(filepath.Join(c.certDir, caFile))
	if err != nil {
		return nil, fmt.Errorf("--webhook-cert-dir %s: read %s: %w", c.certDir, caFile, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("--webhook-cert-dir %s: %s holds no PEM certificate", c.certDir, caFile)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("--webhook-cert-dir %s: parse %s: %w", c.certDir, certFile, err)
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if crt, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(crt)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return nil, fmt.Errorf("--webhook-cert-dir %s: %s is not signed by %s: %w", c.certDir, certFile, caFile, err)
	}
	// The host checks the name it dialled, the --webhook-url host.
	if u, err := url.Parse(c.url); err == nil && u.Hostname() != "" {
		if err := leaf.VerifyHostname(u.Hostname()); err != nil {
			return nil, fmt.Errorf("--webhook-cert-dir %s: %s does not name the --webhook-url host: %w", c.certDir, certFile, err)
		}
	}
	return ca, nil
}

// addWebhook registers the handlers on the manager's webhook server and,
// once this process leads, points the host's ValidatingWebhookConfiguration
// at it: every replica serves, the leader is the one the host calls.
func (c webhookConfig) addWebhook(mgr ctrl.Manager, direct client.Client, ca []byte) error {
	// Secrets are read directly: the manager's cache would watch every Secret of the host.
	rules := c.rules
	rules.Secrets = direct
	rules.Mapper = mgr.GetRESTMapper()
	// Quotas and bindings come from the manager's cache, which the
	// scheduler and the quota controller keep anyway.
	rules.Quotas = mgr.GetClient()
	webhook.Register(mgr.GetWebhookServer(), mgr.GetScheme(), rules)
	if c.external {
		return nil
	}
	install := manager.RunnableFunc(func(ctx context.Context) error {
		cfg := webhook.Config{URL: c.url, CABundle: ca, FailurePolicy: admissionregistrationv1.FailurePolicyType(c.failurePolicy)}
		if err := webhook.Install(ctx, direct, cfg); err != nil || (c.certDir == "" && c.selfSigned == nil) {
			return err
		}
		// A rotated CA (cert-manager renews it in the mounted Secret) is
		// reinstalled by the leader; the replicas pick up the serving
		// certificate on their own. A self-signed certificate is renewed
		// here, trusted by the host before it is served.
		tick := time.NewTicker(caRecheck)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			if c.certDir == "" {
				bundle, commit, err := c.selfSigned.rotate(time.Now())
				if err != nil || commit == nil {
					continue // nothing due, or tried again at the next tick
				}
				cfg.CABundle = bundle
				if err := webhook.Install(ctx, direct, cfg); err != nil {
					return err
				}
				commit()
				continue
			}
			next, err := c.sharedCertificate()
			if err != nil || bytes.Equal(next, cfg.CABundle) {
				continue // a rotation half written; the next tick sees it whole
			}
			cfg.CABundle = next
			if err := webhook.Install(ctx, direct, cfg); err != nil {
				return err
			}
		}
	})
	if err := mgr.Add(install); err != nil {
		return fmt.Errorf("add webhook configuration: %w", err)
	}
	return nil
}
