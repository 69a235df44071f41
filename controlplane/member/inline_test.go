package member

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestInlineOnly: an InlineOnly connection refuses each way of running a
// command or reading a local file, with an error that names the
// kubeconfig field, the user or cluster entry and the member cluster, and
// accepts inline data; without InlineOnly (Terraform) the same connections
// are accepted.
func TestInlineOnly(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	// kubeconfig is a one-context kubeconfig (cluster "target", user
	// "tenant") with inline credentials, changed by mod.
	kubeconfig := func(mod func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo)) []byte {
		cfg := clientcmdapi.NewConfig()
		cluster := clientcmdapi.NewCluster()
		cluster.Server, cluster.CertificateAuthorityData = "https://10.0.0.1:6443", pki.CA
		user := clientcmdapi.NewAuthInfo()
		user.Token = secretToken
		mod(cluster, user)
		cfg.Clusters["target"], cfg.AuthInfos["tenant"] = cluster, user
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo = "target", "tenant"
		cfg.Contexts["main"], cfg.CurrentContext = ctx, "main"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	exec := &clientcmdapi.ExecConfig{Command: "/bin/sh", Args: []string{"-c", "touch /tmp/pwned"}, APIVersion: ExecAPIVersionV1}
	tests := []struct {
		name string
		conn Connection
		// want are the parts of the error, in order; none means accepted.
		want []string
	}{
		{name: "inline token and CA", conn: Connection{Kubeconfig: kubeconfig(func(*clientcmdapi.Cluster, *clientcmdapi.AuthInfo) {})}},
		{name: "inline client certificate, proxy-url", conn: Connection{Kubeconfig: kubeconfig(func(c *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.ClientCertificateData, u.ClientKeyData = "", pki.Cert, pki.Key
			c.ProxyURL = "http://proxy:3128"
		})}},
		{name: "host with token", conn: Connection{Host: "https://10.0.0.1:6443", Token: secretToken}},

		{name: "exec", conn: Connection{Kubeconfig: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) { u.Token, u.Exec = "", exec })},
			want: []string{"cluster member1", "kubeconfig", `user "tenant" sets exec`, "refused"}},
		{name: "auth-provider", conn: Connection{Kubeconfig: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.AuthProvider = "", &clientcmdapi.AuthProviderConfig{Name: "oidc", Config: map[string]string{"id-token": secretToken}}
		})}, want: []string{"cluster member1", "kubeconfig", `user "tenant" sets auth-provider "oidc"`, "refused"}},
		{name: "tokenFile", conn: Connection{Kubeconfig: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.TokenFile = "", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		})}, want: []string{"cluster member1", "kubeconfig", `user "tenant" sets tokenFile`, "refused"}},
		{name: "client-certificate path", conn: Connection{Kubeconfig: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.ClientCertificate, u.ClientKeyData = "", "/etc/flotilla/tls.crt", pki.Key
		})}, want: []string{"cluster member1", "kubeconfig", `user "tenant" sets client-certificate (a file path`, "refused"}},
		{name: "client-key path", conn: Connection{Kubeconfig: kubeconfig(func(_ *clientcmdapi.Cluster, u *clientcmdapi.AuthInfo) {
			u.Token, u.ClientCertificateData, u.ClientKey = "", pki.Cert, "/etc/flotilla/tls.key"
		})}, want: []string{"cluster member1", "kubeconfig", `user "tenant" sets client-key (a file path`, "refused"}},
		{name: "certificate-authority path", conn: Connection{Kubeconfig: kubeconfig(func(c *clientcmdapi.Cluster, _ *clientcmdapi.AuthInfo) {
			c.CertificateAuthorityData, c.CertificateAuthority = nil, "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
		})}, want: []string{"cluster member1", "kubeconfig", `cluster "target" sets certificate-authority (a file path`, "refused"}},
		{name: "kubeconfig path", conn: Connection{KubeconfigPath: "/root/.kube/config"},
			want: []string{"cluster member1", "kubeconfig_path", "refused"}},
		{name: "host with exec", conn: Connection{Host: "https://10.0.0.1:6443", Exec: &ExecConfig{Command: "/bin/sh"}},
			want: []string{"cluster member1", "exec", "refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			conn := tt.conn
			conn.InlineOnly = true
			_, err := NewCache(CacheOptions{}).Get(t.Context(), "member1", conn)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused inline data: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want refused")
			}
			msg := err.Error()
			t.Log(msg)
			rest := msg
			for _, part := range tt.want {
				i := strings.Index(rest, part)
				if i < 0 {
					t.Fatalf("error %q: want %q (in order %q)", msg, part, tt.want)
				}
				rest = rest[i+len(part):]
			}
			if strings.Contains(msg, secretToken) {
				t.Errorf("error quotes a credential: %q", msg)
			}
			if verr := conn.Validate(); verr == nil || verr.Error() != strings.TrimPrefix(msg, "connect to cluster member1: ") {
				t.Errorf("Validate = %v, want the same refusal as building the client (%q)", verr, msg)
			}
			// Terraform does not restrict: the operator runs it.
			conn.InlineOnly = false
			if conn.KubeconfigPath == "" {
				if err := conn.Validate(); err != nil {
					t.Errorf("without InlineOnly: %v", err)
				}
			}
		})
	}
}

// TestInlineOnlyEveryEntry: an entry that the chosen context does not use
// is refused too, and a client built without InlineOnly is not handed out
// once the same connection asks for it.
func TestInlineOnlyEveryEntry(t *testing.T) {
	t.Parallel()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["good"] = &clientcmdapi.AuthInfo{Token: secretToken}
	cfg.AuthInfos["unused"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/bin/true", APIVersion: ExecAPIVersionV1}}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "good"}
	cfg.CurrentContext = "main"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	cache := NewCache(CacheOptions{})
	if _, err := cache.Get(t.Context(), "m", Connection{Kubeconfig: data}); err != nil {
		t.Fatalf("unrestricted: %v", err)
	}
	_, err = cache.Get(t.Context(), "m", Connection{Kubeconfig: data, InlineOnly: true})
	if err == nil || !strings.Contains(err.Error(), `user "unused" sets exec`) {
		t.Fatalf("got %v, want the unused user's exec refused although a client of the same kubeconfig is cached", err)
	}
}

// TestInlineOnlyRunsNothing: an exec plugin of a refused connection never
// runs, even when a request is attempted through the cache.
func TestInlineOnlyRunsNothing(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "exec-ran")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["a"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Command: "/bin/sh", Args: []string{"-c", "touch " + marker}, APIVersion: ExecAPIVersionV1,
	}}
	cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "a", AuthInfo: "u"}
	cfg.CurrentContext = "main"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(CacheOptions{}).Get(t.Context(), "m", Connection{Kubeconfig: data, InlineOnly: true})
	if err == nil {
		_ = c.Probe(t.Context())
		t.Fatal("a connection with exec was built")
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the exec plugin ran: stat %s: %v", marker, err)
	}
}
