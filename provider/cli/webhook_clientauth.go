package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// webhookClientAuth is how the webhook server verifies its caller. The
// handlers decode objects and run customization scripts, so only the host
// apiserver may reach them: it presents a client certificate to webhooks
// when its --admission-control-config-file names one for the webhook's
// host (WebhookAdmissionConfiguration.kubeConfigFile), as it does for
// extension apiservers.
type webhookClientAuth struct {
	// enabled is --webhook-client-auth: true (the default) requires and
	// verifies a client certificate; false is an explicit opt-out for a
	// host that cannot present one (a managed apiserver) or a loopback test.
	enabled bool
	// caFile is --webhook-client-ca: the PEM CA bundle that signs the
	// host's client certificate, reloaded when the file changes.
	caFile string
	// names is --webhook-client-names: the common names accepted; empty
	// accepts any certificate the CA signed.
	names []string
}

// check refuses contradictory or missing flags: with client authentication
// on, the CA is required, so a webhook never serves any TLS client by
// accident.
func (a webhookClientAuth) check() error {
	switch {
	case a.enabled && a.caFile == "":
		return fmt.Errorf("--webhook-client-ca is required: the webhook accepts only the host apiserver, verified by the client certificate it presents to webhooks (see the controlplane guide); --webhook-client-auth=false turns the check off, for a host that cannot present one")
	case !a.enabled && (a.caFile != "" || len(a.names) > 0):
		return fmt.Errorf("--webhook-client-auth=false contradicts --webhook-client-ca and --webhook-client-names")
	}
	return nil
}

// server returns srv requiring the host's client certificate, or srv
// itself when client authentication is off. The CA file is read now, so a
// missing or empty one stops the process at start.
func (a webhookClientAuth) server(opts crwebhook.Options) (crwebhook.Server, error) {
	if !a.enabled {
		return crwebhook.NewServer(opts), nil
	}
	ca, err := dynamiccertificates.NewDynamicCAContentFromFile("webhook-client-ca", a.caFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-client-ca %s: %w", a.caFile, err)
	}
	opts.TLSOpts = append(opts.TLSOpts, func(cfg *tls.Config) { a.requireClient(cfg, ca) })
	return clientVerifyingServer{Server: crwebhook.NewServer(opts), ca: ca}, nil
}

// requireClient makes cfg refuse, during the TLS handshake, a client
// without a certificate signed by the current CA bundle, or with a common
// name outside names: no request of such a client reaches a handler.
func (a webhookClientAuth) requireClient(cfg *tls.Config, ca *dynamiccertificates.DynamicFileCAContent) {
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	// Each handshake takes the CA bundle as it is now, so a rotated CA is
	// trusted without a restart. The clone is made then, too, so it carries
	// the serving certificate controller-runtime sets after these options.
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := cfg.Clone()
		c.GetConfigForClient = nil
		opts, ok := ca.VerifyOptions()
		if !ok {
			return nil, fmt.Errorf("no webhook client CA loaded from %s", a.caFile)
		}
		c.ClientCAs = opts.Roots
		return c, nil
	}
	if len(a.names) == 0 {
		return
	}
	cfg.VerifyPeerCertificate = func(_ [][]byte, chains [][]*x509.Certificate) error {
		if len(chains) == 0 || len(chains[0]) == 0 {
			return fmt.Errorf("no verified client certificate")
		}
		if cn := chains[0][0].Subject.CommonName; !slices.Contains(a.names, cn) {
			return fmt.Errorf("client certificate common name %q is not in --webhook-client-names", cn)
		}
		return nil
	}
}

// clientVerifyingServer is the webhook server plus the watch on the client
// CA file, run for as long as the server.
type clientVerifyingServer struct {
	crwebhook.Server
	ca *dynamiccertificates.DynamicFileCAContent
}

// Start runs the CA file's watch and the server until ctx ends.
func (s clientVerifyingServer) Start(ctx context.Context) error {
	go s.ca.Run(ctx, 1)
	return s.Server.Start(ctx)
}

// splitList reads a comma-separated flag value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
