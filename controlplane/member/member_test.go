package member

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// nodeCPU is the allocatable cpu of the test member's one node.
const nodeCPU = "8"

// TestMember runs every check that needs a live member against one Full
// member cluster, because starting it is the expensive part. The checks that
// do not disturb the member run in parallel; the one that stops its
// apiserver runs last.
func TestMember(t *testing.T) {
	t.Parallel()
	f := testenv.Start(t, testenv.Options{Clusters: 1, Node: testenv.NodeSpec{CPU: resource.MustParse(nodeCPU)}})
	m := f.Clusters[0]
	t.Run("live", func(t *testing.T) {
		t.Run("connection kinds", func(t *testing.T) { t.Parallel(); testConnectionKinds(t, m) })
		t.Run("TLS and credential failures", func(t *testing.T) { t.Parallel(); testFailures(t, m) })
		t.Run("cache", func(t *testing.T) { t.Parallel(); testCache(t, m) })
		t.Run("REST mapper learns new kinds", func(t *testing.T) { t.Parallel(); testMapper(t, m) })
		t.Run("cluster status", func(t *testing.T) { t.Parallel(); testStatus(t, m) })
		t.Run("membership", func(t *testing.T) { t.Parallel(); testMembership(t, m) })
		t.Run("stalling discovery", func(t *testing.T) { t.Parallel(); testStallingDiscovery(t, m) })
	})
	t.Run("unreachable", func(t *testing.T) { testUnreachable(t, m) })
}

// tokenConn is the plain host + token + CA connection to a member.
func tokenConn(m *testenv.Cluster) Connection {
	return Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: m.CAData}
}

// mustGet builds a client through a fresh cache or fails the test.
func mustGet(t testing.TB, name string, conn Connection) *Client {
	t.Helper()
	c, err := NewCache(CacheOptions{}).Get(t.Context(), name, conn)
	if err != nil {
		t.Fatalf("Get(%s): %v", name, err)
	}
	return c
}

// assertWorks probes the member and reads a namespace, which needs the
// credentials to be accepted.
func assertWorks(t testing.TB, c *Client) {
	t.Helper()
	if err := c.Probe(t.Context()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if _, err := c.Kubernetes.CoreV1().Namespaces().Get(t.Context(), "kube-system", metav1.GetOptions{}); err != nil {
		t.Fatalf("get namespace kube-system: %v", err)
	}
}

func testConnectionKinds(t *testing.T, m *testenv.Cluster) {
	dir := t.TempDir()

	// A kubeconfig with two contexts whose current one points nowhere, so
	// only an explicit Context reaches the member.
	cfg, err := clientcmd.LoadFromFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	nowhere := clientcmdapi.NewCluster()
	nowhere.Server, nowhere.CertificateAuthorityData = "https://"+testkit.FreeAddr(t), m.CAData
	cfg.Clusters["nowhere"] = nowhere
	ctx := clientcmdapi.NewContext()
	ctx.Cluster, ctx.AuthInfo = "nowhere", m.Name+"-admin"
	cfg.Contexts["nowhere"] = ctx
	cfg.CurrentContext = "nowhere"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	inline, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	plugin := filepath.Join(dir, "token-plugin")
	script := `#!/bin/sh
[ "$1" = "--cluster" ] && [ "$2" = "` + m.Name + `" ] || { echo "unexpected arguments: $*" >&2; exit 3; }
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"}}\n' "$API_VERSION" "$MEMBER_TOKEN"
`
	if err := os.WriteFile(plugin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	exec := func(apiVersion string) *ExecConfig {
		env := apiVersion
		if env == "" {
			env = ExecAPIVersionV1
		}
		return &ExecConfig{Command: plugin, Args: []string{"--cluster", m.Name}, APIVersion: apiVersion,
			Env: map[string]string{"MEMBER_TOKEN": m.Token, "API_VERSION": env}}
	}

	tests := []struct {
		name string
		conn Connection
	}{
		{"kubeconfig path and context", Connection{KubeconfigPath: path, Context: m.Name}},
		{"inline kubeconfig and context", Connection{Kubeconfig: inline, Context: m.Name}},
		{"fleet kubeconfig, current context", Connection{KubeconfigPath: m.KubeconfigPath}},
		{"host, token and CA", tokenConn(m)},
		{"host, token, CA and server name", Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: m.CAData, TLSServerName: "localhost"}},
		{"host, exec plugin and CA", Connection{Host: m.Host, Exec: exec(""), ClusterCACertificate: m.CAData}},
		{"host, exec plugin v1beta1 and CA", Connection{Host: m.Host, Exec: exec(ExecAPIVersionV1beta1), ClusterCACertificate: m.CAData}},
		{"host, token, explicitly insecure", Connection{Host: m.Host, Token: m.Token, Insecure: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assertWorks(t, mustGet(t, m.Name, tt.conn))
		})
	}

	t.Run("current context of the two-context kubeconfig is not the member", func(t *testing.T) {
		t.Parallel()
		err := mustGet(t, m.Name, Connection{KubeconfigPath: path}).Probe(t.Context())
		if !errors.Is(err, api.ErrNotConnected) {
			t.Fatalf("Probe through context nowhere = %v, want api.ErrNotConnected", err)
		}
	})

	t.Run("all connections are the same cluster", func(t *testing.T) {
		t.Parallel()
		want := mustGet(t, m.Name, tokenConn(m)).Fingerprint()
		for _, tt := range tests[:len(tests)-1] { // an insecure connection has no CA to identify by
			if got := mustGet(t, m.Name, tt.conn).Fingerprint(); got != want {
				t.Errorf("%s: fingerprint %s, want %s", tt.name, got, want)
			}
		}
	})
}

func testFailures(t *testing.T, m *testenv.Cluster) {
	strange := newTestPKI(t)
	tests := []struct {
		name    string
		conn    Connection
		want    error
		wantIn  []string
		secrets []string
	}{
		{
			name:    "no CA and not insecure: the system roots do not trust the member",
			conn:    Connection{Host: m.Host, Token: m.Token},
			want:    api.ErrNotConnected,
			wantIn:  []string{"cluster member1 is not connected: ", "x509: certificate signed by unknown authority"},
			secrets: []string{m.Token},
		},
		{
			name:    "wrong CA",
			conn:    Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: strange.CA},
			want:    api.ErrNotConnected,
			wantIn:  []string{"cluster member1 is not connected: tls: failed to verify certificate: x509: certificate signed by unknown authority"},
			secrets: []string{m.Token},
		},
		{
			name:    "wrong token",
			conn:    Connection{Host: m.Host, Token: secretToken, ClusterCACertificate: m.CAData},
			want:    ErrUnauthorized,
			wantIn:  []string{"cluster member1 is refusing flotilla's credentials: /readyz answered 401 Unauthorized"},
			secrets: []string{secretToken},
		},
		{
			name:    "client certificate the member does not trust",
			conn:    Connection{Host: m.Host, ClientCertificate: strange.Cert, ClientKey: strange.Key, ClusterCACertificate: m.CAData},
			want:    ErrUnauthorized,
			wantIn:  []string{"/readyz answered 401 Unauthorized"},
			secrets: []string{string(strange.Key)},
		},
		{
			name:    "exec plugin that cannot run",
			conn:    Connection{Host: m.Host, Exec: &ExecConfig{Command: filepath.Join(t.TempDir(), "missing-plugin"), Env: map[string]string{"T": secretEnv}}, ClusterCACertificate: m.CAData},
			want:    api.ErrNotConnected,
			wantIn:  []string{"cluster member1 is not connected: ", "missing-plugin"},
			secrets: []string{secretEnv},
		},
		{
			name:    "nothing listens",
			conn:    Connection{Host: testkit.FreeAddr(t), Token: secretToken, ClusterCACertificate: m.CAData, ProxyURL: ""},
			want:    api.ErrNotConnected,
			wantIn:  []string{"cluster member1 is not connected: dial tcp 127.0.0.1:", "connect: connection refused"},
			secrets: []string{secretToken},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustGet(t, m.Name, tt.conn)
			err := c.Probe(t.Context())
			if !errors.Is(err, tt.want) {
				t.Fatalf("Probe = %v, want %v", err, tt.want)
			}
			t.Logf("Probe: %v", err)
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Probe = %q, want it to contain %q", err, s)
				}
			}
			assertNoSecret(t, "Probe", err.Error(), tt.secrets...)
			status, err := CollectStatus(t.Context(), c)
			if !errors.Is(err, tt.want) {
				t.Errorf("CollectStatus = %v, want %v", err, tt.want)
			}
			assertNoSecret(t, "CollectStatus", err.Error(), tt.secrets...)
			ready := apimeta.FindStatusCondition(status.Conditions, api.ClusterConditionReady)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != api.ReasonClusterNotReachable {
				t.Errorf("Ready condition = %+v, want False/%s", ready, api.ReasonClusterNotReachable)
			}
			for _, err := range []error{
				Register(t.Context(), c, "prod", "east"),
				Unregister(t.Context(), c, "prod", "east"),
			} {
				if err == nil {
					t.Errorf("membership call succeeded on a broken connection")
					continue
				}
				assertNoSecret(t, "membership", err.Error(), tt.secrets...)
			}
		})
	}
}

func testCache(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{})
	conn := tokenConn(m)

	first, err := cache.Get(t.Context(), "east", conn)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]*Client, 16)
	for i := range got {
		wg.Go(func() {
			c, err := cache.Get(t.Context(), "east", conn)
			if err != nil {
				t.Errorf("Get: %v", err)
			}
			got[i] = c
		})
	}
	wg.Wait()
	for i, c := range got {
		if c != first {
			t.Fatalf("concurrent Get %d returned another client", i)
		}
	}
	if c, _ := cache.Get(t.Context(), "west", conn); c == first {
		t.Errorf("another member name shares the client")
	}

	wrong := conn
	wrong.Token = secretToken
	rebuilt, err := cache.Get(t.Context(), "east", wrong)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt == first {
		t.Fatalf("Get with a changed connection returned the old client")
	}
	if err := rebuilt.Probe(t.Context()); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Probe of the rebuilt client = %v, want ErrUnauthorized (it must use the new token)", err)
	}
	back, err := cache.Get(t.Context(), "east", conn)
	if err != nil {
		t.Fatal(err)
	}
	if back == rebuilt {
		t.Errorf("Get with the original connection again returned the wrong-token client")
	}
	assertWorks(t, back)

	if _, err := cache.Get(t.Context(), "east", Connection{Host: "http://x", Token: "t"}); err == nil {
		t.Errorf("Get with an invalid connection succeeded")
	}
	if c, _ := cache.Get(t.Context(), "east", conn); c != back {
		t.Errorf("a failed Get replaced the cached client")
	}

	cache.Invalidate("east")
	if c, _ := cache.Get(t.Context(), "east", conn); c == back {
		t.Errorf("Get after Invalidate returned the old client")
	}

	// A kubeconfig file whose contents change is a changed connection.
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data, err := os.ReadFile(m.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fileConn := Connection{KubeconfigPath: path}
	a, err := cache.Get(t.Context(), "file", fileConn)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := cache.Get(t.Context(), "file", fileConn); b != a {
		t.Errorf("Get with an unchanged kubeconfig file rebuilt the client")
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), m.Token, secretToken, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := cache.Get(t.Context(), "file", fileConn)
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Fatalf("Get after the kubeconfig file changed returned the old client")
	}
	if err := b.Probe(t.Context()); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Probe after the file changed = %v, want ErrUnauthorized from the new token", err)
	}
}

func testUnreachable(t *testing.T, m *testenv.Cluster) {
	cache := NewCache(CacheOptions{})
	c, err := cache.Get(t.Context(), m.Name, tokenConn(m))
	if err != nil {
		t.Fatal(err)
	}
	assertWorks(t, c)

	m.StopAPIServer()
	begin := time.Now()
	err = c.Probe(t.Context())
	took := time.Since(begin)
	if !errors.Is(err, api.ErrNotConnected) {
		t.Fatalf("Probe of a stopped member = %v, want api.ErrNotConnected", err)
	}
	if took > 2*time.Second {
		t.Errorf("Probe of a stopped member took %s, want it quick", took)
	}
	if want := "cluster member1 is not connected: dial tcp " + strings.TrimPrefix(m.Host, "https://") + ": connect: connection refused"; err.Error() != want {
		t.Errorf("Probe = %q, want %q", err, want)
	}
	status, err := CollectStatus(t.Context(), c)
	if !errors.Is(err, api.ErrNotConnected) {
		t.Errorf("CollectStatus = %v, want api.ErrNotConnected", err)
	}
	want := []metav1.Condition{{
		Type: api.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: api.ReasonClusterNotReachable, Message: err.Error(),
	}}
	if diff := cmp.Diff(want, status.Conditions, ignoreTransitionTime); diff != "" {
		t.Errorf("conditions of a stopped member (-want +got):\n%s", diff)
	}
	if status.NodeSummary != nil || status.ResourceSummary != nil || status.APIEnablements != nil {
		t.Errorf("a stopped member reports facts: %+v", status)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := m.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// The cached client recovers by itself once the member is back.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Probe(ctx) == nil, nil
	}); err != nil {
		t.Errorf("cached client did not recover after the apiserver restarted: %v", c.Probe(t.Context()))
	}
}
