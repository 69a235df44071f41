package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// proxyService is the host Service the cluster proxy's APIService names.
const proxyService = "flotilla-cluster-proxy"

// impersonatorName names each member's impersonator ServiceAccount (in
// kube-system) and, suffixed to the member's name, its token's Secret on
// the host.
const impersonatorName = "flotilla-impersonator"

// registerClusterProxy makes a serving certificate for the cluster proxy,
// registers its APIService on the host, and returns the control plane's
// flags that serve it. The proxy listens on loopback; the host's
// aggregation layer reaches it through an ExternalName Service naming
// localhost (testenv.RegisterAPIService).
func registerClusterProxy(ctx context.Context, dir string, host *testenv.Cluster, logf func(string, ...any)) ([]string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	certDir := filepath.Join(dir, "cluster-proxy")
	crt, key, err := cert.GenerateSelfSignedCertKey(proxyService+"."+shared.SystemNamespace+".svc", nil, nil)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"tls.crt": crt, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	cs, err := kubernetes.NewForConfig(host.RESTConfig())
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.SystemNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s on the host: %w", ns.Name, err)
	}
	if err := host.RegisterAPIService(ctx, testenv.APIService{Group: fleetview.Group, Version: fleetview.Version,
		Namespace: shared.SystemNamespace, Service: proxyService, Port: port, CABundle: crt}); err != nil {
		return nil, fmt.Errorf("register the cluster proxy: %w", err)
	}
	logf("localup: cluster proxy registered as %s.%s, served at %s", fleetview.Version, fleetview.Group, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	return []string{"--cluster-proxy-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "--cluster-proxy-cert-dir=" + certDir}, nil
}

// impersonatorToken creates the member's impersonator ServiceAccount and
// returns a token of it (one year, the demo's lifetime).
func impersonatorToken(ctx context.Context, m *testenv.Cluster) (string, error) {
	cs, err := kubernetes.NewForConfig(m.RESTConfig())
	if err != nil {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: impersonatorName}}
	if _, err := cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("cluster %s: create the impersonator ServiceAccount: %w", m.Name, err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](365 * 24 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("cluster %s: impersonator token: %w", m.Name, err)
	}
	return tr.Status.Token, nil
}

// controlplaneHasFlag reports whether bin's `controlplane` subcommand
// knows --name, from its usage: a binary older than this localup (an
// upgrade test's previous build, or a released one) runs without the
// features it lacks instead of exiting on an unknown flag.
func controlplaneHasFlag(ctx context.Context, bin, name string) bool {
	out, _ := exec.CommandContext(ctx, bin, "controlplane", "-h").CombinedOutput() // -h exits non-zero
	return bytes.Contains(out, []byte("-"+name+" "))
}
