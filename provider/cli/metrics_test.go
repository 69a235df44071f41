package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/dashboard"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestControlplaneMetricsRequireAuthorization runs the controlplane with
// secure metrics (the default) against a real host: a request without a
// token is refused with 401, an unknown token is refused, a ServiceAccount
// token the host authenticates but does not authorize for GET /metrics with
// 403, and a token of a ServiceAccount bound to a role allowing it gets the
// metrics. The host
// answers the TokenReviews and SubjectAccessReviews.
func TestControlplaneMetricsRequireAuthorization(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	addr, boardAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	certDir, ca := writeCertDir(t)

	// The dashboard rides along: same host reviews, same certificate directory.
	runInProcess(t, controlplaneConfig{
		kubeconfig: host.KubeconfigPath, fleet: "test", probeAddr: "0", inProcess: true,
		metricsAddr: addr, metrics: metricsConfig{secure: true, certDir: certDir},
		dashboard: dashboard.Options{BindAddress: boardAddr, CertDir: certDir},
	})

	kube := kubernetes.NewForConfigOrDie(host.RESTConfig())
	scraper := serviceAccountToken(t, kube, "scraper")
	stranger := serviceAccountToken(t, kube, "stranger")
	if _, err := kube.RbacV1().ClusterRoles().Create(t.Context(), &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(t.Context(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "flotilla-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "scraper"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}
	getURL := func(url, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	get := func(token string) (int, string, error) { return getURL("https://"+addr+"/metrics", token) }
	// The authorized scraper is polled first: it waits for the server and
	// for RBAC to reach the authorizer's cache.
	var code int
	var body string
	var err error
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true,
		func(context.Context) (bool, error) {
			code, body, err = get(scraper)
			return err == nil && code == http.StatusOK, nil
		}); err != nil {
		t.Fatalf("the authorized ServiceAccount never got metrics: status %d, error %v, body %.200q", code, err, body)
	}
	if !strings.Contains(body, "controller_runtime_") {
		t.Errorf("the metrics lack controller-runtime's series: %.300q", body)
	}
	for _, tc := range []struct {
		who   string
		token string
		want  []int
	}{
		{"no token", "", []int{http.StatusUnauthorized}},
		// The host's TokenReview reports an unknown token as an error, which
		// controller-runtime's filter answers with 500; either way, refused.
		{"a token the host does not know", "not-a-token", []int{http.StatusUnauthorized, http.StatusInternalServerError}},
		{"an authenticated ServiceAccount without the role", stranger, []int{http.StatusForbidden}},
	} {
		code, body, err := get(tc.token)
		if err != nil || !slices.Contains(tc.want, code) {
			t.Errorf("%s: status %d (error %v), want one of %v", tc.who, code, err, tc.want)
		}
		if strings.Contains(body, "controller_runtime_") {
			t.Errorf("%s: the refusal carries metrics", tc.who)
		}
	}
	// --dashboard-bind-address serves the dashboard over HTTPS with the
	// directory's certificate (verified against its CA), behind the same
	// reviews: the metrics scraper has no GET /dashboard, the host's admin
	// sees the fleet page. It starts once the manager's caches have synced,
	// after the metrics endpoint.
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 60*time.Second, true,
		func(context.Context) (bool, error) {
			code, body, err = getURL("https://"+boardAddr+"/fleet", host.Token)
			return err == nil && code == http.StatusOK, nil
		}); err != nil {
		t.Fatalf("the dashboard never served the host's admin: status %d, error %v, body %.200q", code, err, body)
	}
	for _, tc := range []struct {
		who   string
		token string
		want  int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"the metrics scraper", scraper, http.StatusForbidden},
		{"the host's admin", host.Token, http.StatusOK},
	} {
		code, body, err := getURL("https://"+boardAddr+"/fleet", tc.token)
		if err != nil || code != tc.want {
			t.Errorf("dashboard, %s: status %d (error %v), want %d: %.200q", tc.who, code, err, tc.want, body)
		}
		if tc.want == http.StatusOK && !strings.Contains(body, "clusters ready") {
			t.Errorf("dashboard, %s: not the fleet page: %.300q", tc.who, body)
		}
	}
}

// serviceAccountToken creates a ServiceAccount in default and returns a
// short-lived token for it from the TokenRequest API.
func serviceAccountToken(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := kube.CoreV1().ServiceAccounts("default").Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(600)
	tr, err := kube.CoreV1().ServiceAccounts("default").CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("token for %s: %w", name, err))
	}
	return tr.Status.Token
}

// TestMetricsOptions checks the flag wiring: secure by default with the
// authn/authz filter, the cert dir in cert-manager's file names, and plain
// HTTP only when asked.
func TestMetricsOptions(t *testing.T) {
	var m metricsConfig
	fs := flagSet()
	addr := m.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	o := m.options(*addr)
	if *addr != ":8443" || !o.SecureServing || o.FilterProvider == nil || o.CertDir != "" {
		t.Errorf("defaults: address %q, secure %v, filter %v, cert dir %q; want :8443, secure, a filter, none",
			*addr, o.SecureServing, o.FilterProvider != nil, o.CertDir)
	}
	fs = flagSet()
	addr = m.register(fs)
	if err := fs.Parse([]string{"--metrics-cert-dir", "/certs", "--metrics-bind-address", "127.0.0.1:9000"}); err != nil {
		t.Fatal(err)
	}
	if o := m.options(*addr); o.BindAddress != "127.0.0.1:9000" || o.CertDir != "/certs" || o.CertName != "tls.crt" || o.KeyName != "tls.key" {
		t.Errorf("cert dir: got %+v", o)
	}
	fs = flagSet()
	addr = m.register(fs)
	if err := fs.Parse([]string{"--metrics-secure=false"}); err != nil {
		t.Fatal(err)
	}
	if o := m.options(*addr); o.SecureServing || o.FilterProvider != nil {
		t.Errorf("--metrics-secure=false: still secure or filtered")
	}
}

func flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
