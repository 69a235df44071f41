package testenv

import (
	"os"
	"path/filepath"
)

// FrontProxyClientName is the common name of the client certificate an
// aggregating testenv kube-apiserver presents to aggregated API servers, and
// the only name its --requestheader-allowed-names admits.
const FrontProxyClientName = "front-proxy-client"

// The front proxy's files, beside the cluster's PKI.
func (p pki) frontProxyCAFile() string     { return filepath.Join(p.dir, "front-proxy-ca.crt") }
func (p pki) frontProxyClientCert() string { return filepath.Join(p.dir, "front-proxy-client.crt") }
func (p pki) frontProxyClientKey() string  { return filepath.Join(p.dir, "front-proxy-client.key") }

// writeFrontProxy gives the apiserver the identity its aggregation layer
// presents to extension apiservers, as kubeadm's front-proxy PKI does: a CA
// of its own (not the cluster CA, so a certificate it signs cannot log into
// the apiserver itself, and no client certificate of the cluster CA can
// assert X-Remote-User to an extension apiserver) and one client
// certificate signed by it.
func writeFrontProxy(p pki) error {
	ca, cert, key, err := clientIdentity("flotilla-testenv-front-proxy-ca", FrontProxyClientName)
	if err != nil {
		return err
	}
	for path, data := range map[string][]byte{
		p.frontProxyCAFile():     ca,
		p.frontProxyClientCert(): cert,
		p.frontProxyClientKey():  key,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// aggregationArgs are the kube-apiserver flags of the aggregation layer,
// as a production apiserver (kubeadm's) sets them: the request-header
// authentication an extension apiserver reads from the
// kube-system/extension-apiserver-authentication ConfigMap and the client
// certificate the apiserver proxies with. Aggregator routing to endpoints
// stays off: every aggregated API here is a local process behind an
// ExternalName Service naming localhost (RegisterAPIService, metrics-server),
// which the aggregation layer resolves only when it routes by Service.
func aggregationArgs(p pki) []string {
	return []string{
		"--requestheader-client-ca-file=" + p.frontProxyCAFile(),
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-uid-headers=X-Remote-Uid",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.frontProxyClientCert(),
		"--proxy-client-key-file=" + p.frontProxyClientKey(),
	}
}
