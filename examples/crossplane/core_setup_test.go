package examples

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// What `make tools` puts beside the crossplane CLI for the end-to-end test.
const (
	coreBinary      = "crossplane-core"                      // github.com/crossplane/crossplane/v2/cmd/crossplane
	coreCRDs        = "crossplane-crds"                      // its cluster/crds
	functionPackage = "function-patch-and-transform-package" // the function's package/ directory
)

// Crossplane's namespace and the Secrets its Helm chart names (TLS_*_SECRET_NAME).
const (
	xpNamespace      = "crossplane-system"
	xpServiceAccount = "crossplane"
	caSecret         = "crossplane-root-ca"
	clientSecret     = "crossplane-tls-client"
)

// initCore prepares the host as Crossplane's Helm chart and init container
// do: its namespace and ServiceAccount, then `crossplane core init`, which
// installs the core CRDs, the Lock and the defaults and generates
// Crossplane's CA and its gRPC client certificate into Secrets. It writes
// the client certificate where `core start --tls-client-certs-dir` reads
// it, and a server certificate for 127.0.0.1 signed by the same CA where
// the function's --tls-certs-dir reads it: what the Deployment runtime
// mounts into a Function's pod. It returns both directories.
func initCore(t *testing.T, c client.Client, tools, dir string, host *testenv.Cluster) (clientCerts, functionCerts string) {
	t.Helper()
	testkit.MustCreate(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: xpNamespace}})
	testkit.MustCreate(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: xpNamespace, Name: xpServiceAccount}})
	// Init does not wait for the CRDs it applies to be served, so its next
	// step can fail with "no matches for kind"; in the chart the pod's
	// init container is restarted, here init runs again, a few times.
	for attempt := 1; ; attempt++ {
		// CRDS_PATH, as the chart sets it: kong spells the flag --cr-ds-path.
		cmd := exec.CommandContext(t.Context(), filepath.Join(tools, coreBinary), "core", "init", "--enable-webhooks=false")
		cmd.Env = append(os.Environ(), append(coreEnv(host), "CRDS_PATH="+filepath.Join(tools, coreCRDs))...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(string(out), "no matches for kind") {
			t.Fatalf("crossplane core init (attempt %d): %v\n%s", attempt, err, out)
		}
		time.Sleep(time.Second)
	}

	var ca, cl corev1.Secret
	for name, s := range map[string]*corev1.Secret{caSecret: &ca, clientSecret: &cl} {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: xpNamespace, Name: name}, s); err != nil {
			t.Fatalf("crossplane core init left no Secret %s/%s: %v", xpNamespace, name, err)
		}
	}
	clientCerts = filepath.Join(dir, "client-certs")
	writeCerts(t, clientCerts, cl.Data["ca.crt"], cl.Data[corev1.TLSCertKey], cl.Data[corev1.TLSPrivateKeyKey])
	certPEM, keyPEM := signServing(t, ca.Data[corev1.TLSCertKey], ca.Data[corev1.TLSPrivateKeyKey])
	functionCerts = filepath.Join(dir, "function-certs")
	writeCerts(t, functionCerts, ca.Data[corev1.TLSCertKey], certPEM, keyPEM)
	return clientCerts, functionCerts
}

// coreEnv is the environment Crossplane's Helm chart gives core: its
// namespace and ServiceAccount, and the TLS Secrets' names.
func coreEnv(host *testenv.Cluster) []string {
	return []string{
		"KUBECONFIG=" + host.KubeconfigPath,
		"POD_NAMESPACE=" + xpNamespace,
		"POD_SERVICE_ACCOUNT=" + xpServiceAccount,
		"TLS_CA_SECRET_NAME=" + caSecret,
		"TLS_CLIENT_SECRET_NAME=" + clientSecret,
	}
}

// writeCerts writes ca.crt, tls.crt and tls.key into dir.
func writeCerts(t *testing.T, dir string, ca, cert, key []byte) {
	t.Helper()
	if len(ca) == 0 || len(cert) == 0 || len(key) == 0 {
		t.Fatalf("%s: a certificate or key is empty (ca %d, cert %d, key %d bytes)", dir, len(ca), len(cert), len(key))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.crt": ca, "tls.crt": cert, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// signServing issues a gRPC server certificate for 127.0.0.1 with
// Crossplane's CA (PEM certificate and PKCS#1 key, as init writes them).
func signServing(t *testing.T, caPEM, caKeyPEM []byte) (certPEM, keyPEM []byte) {
	t.Helper()
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(caKeyPEM)
	if cb == nil || kb == nil {
		t.Fatalf("Secret %s/%s holds no PEM certificate and key", xpNamespace, caSecret)
	}
	caCert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatalf("Secret %s/%s: key: %v", xpNamespace, caSecret, err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "function-patch-and-transform"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// publishFunction builds function-patch-and-transform's package from its
// pinned package/ directory with `crossplane xpkg build` and pushes it with
// `crossplane xpkg push` to a registry on loopback (go-containerregistry's
// in-memory registry), under the repository its package reference in
// functions.yaml names. It returns the registry's host:port.
func publishFunction(t *testing.T, tools, dir, ref string) string {
	t.Helper()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	regHost := strings.TrimPrefix(reg.URL, "http://")
	repo, ok := strings.CutPrefix(ref, upstreamRegistry+"/")
	if !ok {
		t.Fatalf("function package %q is not on %s", ref, upstreamRegistry)
	}
	pkg := filepath.Join(dir, "function.xpkg")
	cli := filepath.Join(tools, crossplaneBinary)
	for _, args := range [][]string{
		{"xpkg", "build", "--package-root", filepath.Join(tools, functionPackage), "--package-file", pkg},
		{"xpkg", "push", "-f", pkg, regHost + "/" + repo},
	} {
		cmd := exec.CommandContext(t.Context(), cli, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("crossplane %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return regHost
}

// upstreamRegistry is where functions.yaml pulls the function from.
const upstreamRegistry = "xpkg.crossplane.io"

// createAll creates objects on c, retrying while their kind is not served
// yet (a CRD that a process installs or Crossplane derives from an XRD).
func createAll(t *testing.T, c client.Client, source string, objs ...*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		testkit.Eventually(t, startWithin, source+": create "+u.GetKind()+" "+u.GetName(), func() (bool, string) {
			err := c.Create(t.Context(), u.DeepCopy())
			if err == nil {
				return true, ""
			}
			if !apimeta.IsNoMatchError(err) {
				t.Fatalf("%s: create %s %s: %v", source, u.GetKind(), u.GetName(), err)
			}
			return false, err.Error()
		})
	}
}
