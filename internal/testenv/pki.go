package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the credential set of one member cluster, as files under dir.
type pki struct {
	dir    string
	caCert []byte // PEM
	token  string
}

func (p pki) caFile() string        { return filepath.Join(p.dir, "ca.crt") }
func (p pki) servingCert() string   { return filepath.Join(p.dir, "serving.crt") }
func (p pki) servingKey() string    { return filepath.Join(p.dir, "serving.key") }
func (p pki) saPublicKey() string   { return filepath.Join(p.dir, "sa.pub") }
func (p pki) saPrivateKey() string  { return filepath.Join(p.dir, "sa.key") }
func (p pki) tokenAuthFile() string { return filepath.Join(p.dir, "tokens.csv") }

// newPKI writes a CA, a serving certificate for 127.0.0.1 and localhost, a
// service-account key pair, a one-line token file and the apiserver's
// webhook client identity (writeWebhookClient) into dir. ECDSA keeps
// certificate generation fast; the service-account key is RSA because that
// is what the brief and most tooling expect.
func newPKI(dir string) (pki, error) {
	p := pki{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, err
	}
	now := time.Now()

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "flotilla-testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	caParsed, err := x509.ParseCertificate(caDER)
	if err != nil {
		return p, err
	}
	p.caCert = pemBlock("CERTIFICATE", caDER)

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caParsed, &srvKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return p, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return p, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return p, err
	}

	p.token = randomHex(16)
	files := []struct {
		path string
		data []byte
	}{
		{p.caFile(), p.caCert},
		{p.servingCert(), pemBlock("CERTIFICATE", srvDER)},
		{p.servingKey(), pemBlock("EC PRIVATE KEY", srvKeyDER)},
		{p.saPublicKey(), pemBlock("PUBLIC KEY", saPubDER)},
		{p.saPrivateKey(), pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey))},
		{p.tokenAuthFile(), []byte(p.token + ",admin,admin-uid,system:masters\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return p, err
		}
	}
	return p, writeWebhookClient(p)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b)
}
