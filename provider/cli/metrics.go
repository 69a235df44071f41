package cli

import (
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsConfig is the metrics endpoint's part of the controlplane and
// crossplane flags.
// The bind address itself stays a plain field of each command's config.
type metricsConfig struct {
	// secure serves HTTPS and lets a request through only when the host
	// apiserver authenticates its bearer token (TokenReview) and authorizes
	// it for GET /metrics (SubjectAccessReview), as kubebuilder projects do.
	secure bool
	// certDir holds tls.crt and tls.key for the metrics endpoint; empty
	// makes controller-runtime generate a self-signed certificate.
	certDir string
}

// register adds the metrics flags to fs and returns the bind address flag.
func (m *metricsConfig) register(fs *flag.FlagSet) *string {
	addr := fs.String("metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint; 0 turns it off")
	fs.BoolVar(&m.secure, "metrics-secure", true, "serve metrics over HTTPS to callers the host apiserver authenticates and authorizes for GET /metrics (TokenReview, SubjectAccessReview); false serves plain HTTP to anyone who reaches the address")
	fs.StringVar(&m.certDir, "metrics-cert-dir", "", "`directory` with tls.crt and tls.key for the metrics endpoint (a cert-manager Certificate's Secret), reloaded on change; empty uses a self-signed certificate")
	return addr
}

// options is the manager's metrics server configuration for addr ("0"
// turns metrics off).
func (m metricsConfig) options(addr string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr}
	if !m.secure {
		return o
	}
	o.SecureServing = true
	o.FilterProvider = filters.WithAuthenticationAndAuthorization
	if m.certDir != "" {
		o.CertDir, o.CertName, o.KeyName = m.certDir, certFile, keyFile
	}
	return o
}
