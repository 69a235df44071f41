package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
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
	// rules configures the ResourceBinding and Work handlers.
	rules webhook.Options
}

// webhookServer returns the manager's webhook server, serving a
// certificate made for the host of c.url, and the CA bundle that trusts it;
// nil when the webhook is off.
func (c webhookConfig) webhookServer() (crwebhook.Server, []byte, error) {
	if c.url == "" {
		return nil, nil, nil
	}
	switch admissionv1.FailurePolicyType(c.failurePolicy) {
	case admissionv1.Fail, admissionv1.Ignore:
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
	cert, ca, err := webhook.ServingCertificate(c.url)
	if err != nil {
		return nil, nil, fmt.Errorf("--webhook-url: %w", err)
	}
	srv := crwebhook.NewServer(crwebhook.Options{
		Host: host, Port: port,
		TLSOpts: []func(*tls.Config){func(t *tls.Config) {
			t.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &cert, nil }
		}},
	})
	return srv, ca, nil
}

// addWebhook registers the handlers on the manager's webhook server and,
// once this process leads, points the host's ValidatingWebhookConfiguration
// at it: every replica serves, the leader is the one the host calls.
func (c webhookConfig) addWebhook(mgr ctrl.Manager, direct client.Client, ca []byte) error {
	// Secrets are read directly: the manager's cache would watch every Secret of the host.
	rules := c.rules
	rules.Secrets = direct
	webhook.Register(mgr.GetWebhookServer(), mgr.GetScheme(), rules)
	install := manager.RunnableFunc(func(ctx context.Context) error {
		return webhook.Install(ctx, direct, webhook.Config{
			URL: c.url, CABundle: ca, FailurePolicy: admissionv1.FailurePolicyType(c.failurePolicy),
		})
	})
	if err := mgr.Add(install); err != nil {
		return fmt.Errorf("add webhook configuration: %w", err)
	}
	return nil
}
