package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// WebhookClientName is the common name of the client certificate every
// testenv kube-apiserver presents to admission webhooks.
const WebhookClientName = "kube-apiserver-webhook-client"

// The files of the webhook client identity, beside the cluster's PKI.
func (p pki) webhookClientCAFile() string { return filepath.Join(p.dir, "webhook-client-ca.crt") }
func (p pki) webhookClientCert() string   { return filepath.Join(p.dir, "webhook-client.crt") }
func (p pki) webhookClientKey() string    { return filepath.Join(p.dir, "webhook-client.key") }
func (p pki) webhookKubeconfig() string   { return filepath.Join(p.dir, "webhook-kubeconfig.yaml") }
func (p pki) admissionConfigFile() string { return filepath.Join(p.dir, "admission-control.yaml") }

// writeWebhookClient gives the apiserver a client certificate to present
// to admission webhooks, as a production host is configured for webhooks
// that authenticate their caller: a CA of its own (not the cluster CA, so
// the certificate cannot log into the apiserver), a client certificate it
// signs, a kubeconfig naming that certificate for every webhook host ("*"),
// and an AdmissionConfiguration pointing both webhook admission plugins at
// the kubeconfig. Every cluster gets them: a webhook that does not ask for
// a client certificate is unaffected.
func writeWebhookClient(p pki) error {
	ca, cert, key, err := clientIdentity("flotilla-testenv-webhook-client-ca", WebhookClientName)
	if err != nil {
		return err
	}
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %q
    client-key: %q
`, p.webhookClientCert(), p.webhookClientKey())
	admission := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]q
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]q
`, p.webhookKubeconfig())
	for path, data := range map[string][]byte{
		p.webhookClientCAFile(): ca,
		p.webhookClientCert():   cert,
		p.webhookClientKey():    key,
		p.webhookKubeconfig():   []byte(kubeconfig),
		p.admissionConfigFile(): []byte(admission),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// clientIdentity makes a CA of its own and one client certificate it signs
// for clientName, PEM-encoded: the shape of every identity a testenv
// apiserver presents to something it calls (webhooks, aggregated APIs), so
// that certificate can never log into the apiserver itself.
func clientIdentity(caName, clientName string) (caPEM, certPEM, keyPEM []byte, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: caName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: clientName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pemBlock("CERTIFICATE", caDER), pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}
