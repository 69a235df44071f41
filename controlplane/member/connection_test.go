package member

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	secretToken = "s3cr3t-t0ken-never-to-be-printed"
	secretEnv   = "s3cr3t-env-value-never-printed"
	secretProxy = "s3cr3t-proxy-password"
)

// kubeconfigBytes is a kubeconfig with one context per cluster entry: name
// → server, all with token secretToken, and current-context current.
func kubeconfigBytes(t testing.TB, current string, servers map[string]string, ca []byte) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, server := range servers {
		cluster := clientcmdapi.NewCluster()
		cluster.Server, cluster.CertificateAuthorityData = server, ca
		cfg.Clusters[name] = cluster
		user := clientcmdapi.NewAuthInfo()
		user.Token = secretToken
		cfg.AuthInfos[name] = user
		ctx := clientcmdapi.NewContext()
		ctx.Cluster, ctx.AuthInfo = name, name
		cfg.Contexts[name] = ctx
	}
	cfg.CurrentContext = current
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestValidate(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	inline := kubeconfigBytes(t, "east", map[string]string{"east": "https://east:6443", "west": "https://west:6443"}, pki.CA)
	noCurrent := kubeconfigBytes(t, "", map[string]string{"east": "https://east:6443"}, pki.CA)
	host := func(mod func(*Connection)) Connection {
		c := Connection{Host: "https://10.0.0.1:6443", Token: secretToken, ClusterCACertificate: pki.CA}
		mod(&c)
		return c
	}
	tests := []struct {
		name      string
		conn      Connection
		wantField string // "" means valid
		wantIn    string
	}{
		{name: "kubeconfig path", conn: Connection{KubeconfigPath: "~/.kube/config", Context: "east"}},
		{name: "kubeconfig path with overrides", conn: Connection{KubeconfigPath: "/k", Insecure: true, TLSServerName: "x", ProxyURL: "http://proxy:3128"}},
		{name: "inline kubeconfig, current context", conn: Connection{Kubeconfig: inline}},
		{name: "inline kubeconfig, named context", conn: Connection{Kubeconfig: inline, Context: "west"}},
		{name: "host and token", conn: host(func(*Connection) {})},
		{name: "host without scheme", conn: host(func(c *Connection) { c.Host = "10.0.0.1:6443" })},
		{name: "host with path", conn: host(func(c *Connection) { c.Host = "https://rancher.example.com/k8s/clusters/c-1/" })},
		{name: "host and client certificate", conn: host(func(c *Connection) { c.Token, c.ClientCertificate, c.ClientKey = "", pki.Cert, pki.Key })},
		{name: "host and exec", conn: host(func(c *Connection) {
			c.Token, c.Exec = "", &ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}}
		})},
		{name: "host, insecure, no CA", conn: host(func(c *Connection) { c.ClusterCACertificate, c.Insecure = nil, true })},
		{name: "host, system roots", conn: host(func(c *Connection) { c.ClusterCACertificate = nil })},

		{name: "nothing", conn: Connection{}, wantField: "host", wantIn: "no way to connect"},
		{name: "path and host", conn: host(func(c *Connection) { c.KubeconfigPath = "/k" }), wantField: "host", wantIn: "cannot be combined with kubeconfig_path"},
		{name: "path and inline", conn: Connection{KubeconfigPath: "/k", Kubeconfig: inline}, wantField: "kubeconfig", wantIn: "exactly one of"},
		{name: "path and token", conn: Connection{KubeconfigPath: "/k", Token: secretToken}, wantField: "token", wantIn: "only used with host"},
		{name: "inline and CA", conn: Connection{Kubeconfig: inline, ClusterCACertificate: pki.CA}, wantField: "cluster_ca_certificate"},
		{name: "inline not a kubeconfig", conn: Connection{Kubeconfig: []byte("token: " + secretToken + "\n\t- [")}, wantField: "kubeconfig", wantIn: "not a valid kubeconfig"},
		{name: "inline unknown context", conn: Connection{Kubeconfig: inline, Context: "north"}, wantField: "context", wantIn: `"north" is not in the kubeconfig, which has contexts "east", "west"`},
		{name: "inline without current context", conn: Connection{Kubeconfig: noCurrent}, wantField: "context", wantIn: "no current-context"},
		{name: "host and context", conn: host(func(c *Connection) { c.Context = "east" }), wantField: "context"},
		{name: "plain http", conn: host(func(c *Connection) { c.Host = "http://10.0.0.1:8080" }), wantField: "host", wantIn: "must use https"},
		{name: "other scheme", conn: host(func(c *Connection) { c.Host = "ftp://10.0.0.1" }), wantField: "host", wantIn: `scheme "ftp"`},
		{name: "user in host", conn: host(func(c *Connection) { c.Host = "https://admin:" + secretToken + "@10.0.0.1" }), wantField: "host", wantIn: "user or password"},
		{name: "query in host", conn: host(func(c *Connection) { c.Host = "https://10.0.0.1/?a=b" }), wantField: "host"},
		{name: "no credentials", conn: host(func(c *Connection) { c.Token = "" }), wantField: "token", wantIn: "needs credentials"},
		{name: "token and exec", conn: host(func(c *Connection) { c.Exec = &ExecConfig{Command: "x"} }), wantField: "exec", wantIn: "cannot be combined with token"},
		{name: "token and certificate", conn: host(func(c *Connection) { c.ClientCertificate, c.ClientKey = pki.Cert, pki.Key }), wantField: "client_certificate"},
		{name: "certificate without key", conn: host(func(c *Connection) { c.Token, c.ClientCertificate = "", pki.Cert }), wantField: "client_key", wantIn: "required"},
		{name: "key without certificate", conn: host(func(c *Connection) { c.Token, c.ClientKey = "", pki.Key }), wantField: "client_certificate", wantIn: "required"},
		{name: "certificate not PEM", conn: host(func(c *Connection) { c.Token, c.ClientCertificate, c.ClientKey = "", []byte("nope"), pki.Key }), wantField: "client_certificate"},
		{name: "key not a key", conn: host(func(c *Connection) { c.Token, c.ClientCertificate, c.ClientKey = "", pki.Cert, pki.Cert }), wantField: "client_key"},
		{name: "CA not PEM", conn: host(func(c *Connection) { c.ClusterCACertificate = []byte("nope") }), wantField: "cluster_ca_certificate"},
		{name: "insecure and CA", conn: host(func(c *Connection) { c.Insecure = true }), wantField: "insecure"},
		{name: "exec without command", conn: host(func(c *Connection) { c.Token, c.Exec = "", &ExecConfig{} }), wantField: "exec.command"},
		{name: "exec unknown api version", conn: host(func(c *Connection) { c.Token, c.Exec = "", &ExecConfig{Command: "x", APIVersion: "v9"} }), wantField: "exec.api_version"},
		{name: "exec bad env name", conn: host(func(c *Connection) {
			c.Token, c.Exec = "", &ExecConfig{Command: "x", Env: map[string]string{"A=B": secretEnv}}
		}), wantField: "exec.env"},
		{name: "proxy with bad scheme", conn: host(func(c *Connection) { c.ProxyURL = "ftp://u:" + secretProxy + "@proxy" }), wantField: "proxy_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.conn.Validate()
			var verr *ValidationError
			if err != nil && !errors.As(err, &verr) {
				t.Fatalf("Validate() = %v, not a *ValidationError", err)
			}
			gotField := ""
			if verr != nil {
				gotField = verr.Field
			}
			if diff := cmp.Diff(tt.wantField, gotField); diff != "" {
				t.Fatalf("Validate() field (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), tt.wantIn) || !strings.HasPrefix(err.Error(), "invalid connection: "+tt.wantField+": ") {
				t.Errorf("Validate() = %q, want it to start with the field and contain %q", err, tt.wantIn)
			}
			assertNoSecret(t, "Validate()", err.Error(), secretToken, secretEnv, secretProxy, string(pki.Key))
		})
	}
}

// restShape is the part of a *rest.Config a test compares.
type restShape struct {
	Host, Token, ServerName, Proxy, UserAgent string
	CA, Cert, Key                             string
	Insecure                                  bool
	Exec                                      *clientcmdapi.ExecConfig
	QPS                                       float32
	Burst                                     int
}

func shapeOf(t testing.TB, cfg *rest.Config) restShape {
	t.Helper()
	s := restShape{
		Host: cfg.Host, Token: cfg.BearerToken, ServerName: cfg.ServerName, UserAgent: cfg.UserAgent,
		CA: string(cfg.CAData), Cert: string(cfg.CertData), Key: string(cfg.KeyData),
		Insecure: cfg.Insecure, QPS: cfg.QPS, Burst: cfg.Burst,
	}
	if cfg.Proxy != nil {
		u, err := cfg.Proxy(&http.Request{})
		if err != nil {
			t.Fatal(err)
		}
		s.Proxy = u.String()
	}
	if e := cfg.ExecProvider; e != nil {
		s.Exec = &clientcmdapi.ExecConfig{Command: e.Command, Args: e.Args, Env: e.Env, APIVersion: e.APIVersion, InteractiveMode: e.InteractiveMode}
	}
	return s
}

// TestRESTConfig checks the *rest.Config of each way of connecting offline.
// The client-certificate way is only tested here: testenv's apiservers
// have no client-certificate user.
func TestRESTConfig(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	inline := kubeconfigBytes(t, "east", map[string]string{"east": "https://east:6443", "west": "https://west:6443"}, pki.CA)
	base := restShape{UserAgent: "flotilla/dev", QPS: defaultQPS, Burst: defaultBurst}
	with := func(mod func(*restShape)) restShape {
		s := base
		mod(&s)
		return s
	}
	tests := []struct {
		name string
		conn Connection
		want restShape
	}{
		{
			name: "token",
			conn: Connection{Host: "10.0.0.1:6443", Token: secretToken, ClusterCACertificate: pki.CA},
			want: with(func(s *restShape) { s.Host, s.Token, s.CA = "https://10.0.0.1:6443", secretToken, string(pki.CA) }),
		},
		{
			name: "client certificate, server name and proxy",
			conn: Connection{Host: "https://10.0.0.1:6443/", ClientCertificate: pki.Cert, ClientKey: pki.Key, ClusterCACertificate: pki.CA, TLSServerName: "api.internal", ProxyURL: "socks5://proxy:1080"},
			want: with(func(s *restShape) {
				s.Host, s.Cert, s.Key, s.CA = "https://10.0.0.1:6443", string(pki.Cert), string(pki.Key), string(pki.CA)
				s.ServerName, s.Proxy = "api.internal", "socks5://proxy:1080"
			}),
		},
		{
			name: "exec, insecure",
			conn: Connection{Host: "https://10.0.0.1", Insecure: true, Exec: &ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}, Env: map[string]string{"B": "2", "A": secretEnv}}},
			want: with(func(s *restShape) {
				s.Host, s.Insecure = "https://10.0.0.1", true
				s.Exec = &clientcmdapi.ExecConfig{
					Command: "aws", Args: []string{"eks", "get-token"}, APIVersion: ExecAPIVersionV1, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
					Env: []clientcmdapi.ExecEnvVar{{Name: "A", Value: secretEnv}, {Name: "B", Value: "2"}},
				}
			}),
		},
		{
			name: "exec v1beta1",
			conn: Connection{Host: "https://10.0.0.1", Exec: &ExecConfig{Command: "gke-gcloud-auth-plugin", APIVersion: ExecAPIVersionV1beta1}},
			want: with(func(s *restShape) {
				s.Host = "https://10.0.0.1"
				s.Exec = &clientcmdapi.ExecConfig{Command: "gke-gcloud-auth-plugin", APIVersion: ExecAPIVersionV1beta1, InteractiveMode: clientcmdapi.NeverExecInteractiveMode, Env: []clientcmdapi.ExecEnvVar{}}
			}),
		},
		{
			name: "inline kubeconfig, current context",
			conn: Connection{Kubeconfig: inline},
			want: with(func(s *restShape) { s.Host, s.Token, s.CA = "https://east:6443", secretToken, string(pki.CA) }),
		},
		{
			name: "inline kubeconfig, named context, insecure overrides the CA",
			conn: Connection{Kubeconfig: inline, Context: "west", Insecure: true, TLSServerName: "west.internal"},
			want: with(func(s *restShape) {
				s.Host, s.Token, s.Insecure, s.ServerName = "https://west:6443", secretToken, true, "west.internal"
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tt.conn.RESTConfig()
			if err != nil {
				t.Fatalf("RESTConfig: %v", err)
			}
			if diff := cmp.Diff(tt.want, shapeOf(t, cfg)); diff != "" {
				t.Errorf("RESTConfig (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKubeconfigPath reads a kubeconfig file through "~/" and picks contexts.
// It sets $HOME, so it cannot run in parallel.
func TestKubeconfigPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	pki := newTestPKI(t)
	data := kubeconfigBytes(t, "east", map[string]string{"east": "https://east:6443", "west": "https://west:6443"}, pki.CA)
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "fleet"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		conn     Connection
		wantHost string
		wantErr  string
	}{
		{conn: Connection{KubeconfigPath: "~/.kube/fleet"}, wantHost: "https://east:6443"},
		{conn: Connection{KubeconfigPath: "~/.kube/fleet", Context: "west"}, wantHost: "https://west:6443"},
		{conn: Connection{KubeconfigPath: filepath.Join(home, ".kube", "fleet"), Context: "west"}, wantHost: "https://west:6443"},
		{conn: Connection{KubeconfigPath: "~/.kube/fleet", Context: "north"}, wantErr: `invalid connection: context: "north" is not in kubeconfig ~/.kube/fleet, which has contexts "east", "west"`},
		{conn: Connection{KubeconfigPath: "~/.kube/missing"}, wantErr: "load kubeconfig ~/.kube/missing: "},
	}
	for _, tt := range tests {
		cfg, err := tt.conn.RESTConfig()
		gotHost, gotErr := "", ""
		if err != nil {
			gotErr = err.Error()
			assertNoSecret(t, "RESTConfig()", gotErr, secretToken)
		} else {
			gotHost = cfg.Host
			if cfg.BearerToken != secretToken {
				t.Errorf("%v: token not taken from the kubeconfig", tt.conn)
			}
		}
		if gotHost != tt.wantHost || !strings.HasPrefix(gotErr, tt.wantErr) || (tt.wantErr == "") != (gotErr == "") {
			t.Errorf("%v: RESTConfig() host %q, error %q; want host %q, error starting %q", tt.conn, gotHost, gotErr, tt.wantHost, tt.wantErr)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	pki, other := newTestPKI(t), newTestPKI(t)
	fp := func(c Connection) string {
		t.Helper()
		s, err := c.Fingerprint()
		if err != nil {
			t.Fatalf("Fingerprint(%v): %v", c, err)
		}
		return s
	}
	ref := fp(Connection{Host: "https://api.example.com:443", Token: "a", ClusterCACertificate: pki.CA})
	if !strings.HasPrefix(ref, "sha256:") || len(ref) != len("sha256:")+64 {
		t.Fatalf("fingerprint %q is not sha256:<64 hex>", ref)
	}
	tests := []struct {
		name string
		conn Connection
		same bool
	}{
		{"other credentials", Connection{Host: "https://api.example.com", Exec: &ExecConfig{Command: "x"}, ClusterCACertificate: pki.CA}, true},
		{"no scheme, upper case, trailing slash", Connection{Host: "API.Example.com/", Token: "b", ClusterCACertificate: pki.CA}, true},
		{"CA with comments and blank lines", Connection{Host: "https://api.example.com", Token: "b", ClusterCACertificate: []byte("# prod CA\n\n" + string(pki.CA) + "\n")}, true},
		{"same server in a kubeconfig", Connection{Kubeconfig: kubeconfigBytes(t, "x", map[string]string{"x": "https://api.example.com:443"}, pki.CA)}, true},
		{"other port", Connection{Host: "https://api.example.com:6443", Token: "a", ClusterCACertificate: pki.CA}, false},
		{"other host", Connection{Host: "https://api2.example.com", Token: "a", ClusterCACertificate: pki.CA}, false},
		{"other CA", Connection{Host: "https://api.example.com", Token: "a", ClusterCACertificate: other.CA}, false},
		{"no CA", Connection{Host: "https://api.example.com", Token: "a", Insecure: true}, false},
	}
	for _, tt := range tests {
		if got := fp(tt.conn) == ref; got != tt.same {
			t.Errorf("%s: same fingerprint = %v, want %v", tt.name, got, tt.same)
		}
	}
}

// TestSecretsStayOutOfMessages builds every message a connection holding
// known secrets can produce offline and checks none contains them. The
// member tests do the same for errors that come back from a live server.
func TestSecretsStayOutOfMessages(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	secretKubeconfig := kubeconfigBytes(t, "east", map[string]string{"east": "https://east:6443"}, pki.CA)
	all := []string{secretToken, secretEnv, secretProxy, string(pki.Key)}
	conns := []Connection{
		{Host: "https://10.0.0.1", Token: secretToken, Exec: &ExecConfig{Command: "x", Env: map[string]string{"T": secretEnv}}},
		{Host: "https://10.0.0.1", Token: secretToken, ClientKey: pki.Key},
		{Host: "https://10.0.0.1", ClientCertificate: pki.Cert, ClientKey: pki.Cert},
		{Host: "https://10.0.0.1", ClientCertificate: []byte(secretToken), ClientKey: pki.Key},
		{Host: "https://u:" + secretProxy + "@10.0.0.1", Token: secretToken},
		{Host: "https://10.0.0.1", Token: secretToken, ProxyURL: "gopher://u:" + secretProxy + "@proxy"},
		{Host: "https://10.0.0.1", Token: secretToken, ClusterCACertificate: []byte(secretToken)},
		{Host: "https://10.0.0.1", Token: secretToken, Context: "east", ProxyURL: "http://u:" + secretProxy + "@proxy:3128"},
		{Kubeconfig: secretKubeconfig, Token: secretToken},
		{Kubeconfig: secretKubeconfig, Context: "west"},
		{Kubeconfig: []byte("users:\n- name: x\n  user:\n    token: " + secretToken + "\n  - broken")},
		{KubeconfigPath: "/nonexistent/" + "kubeconfig", ClientKey: pki.Key},
		{KubeconfigPath: "/nonexistent/kubeconfig", ProxyURL: "http://u:" + secretProxy + "@proxy:3128"},
	}
	for i, conn := range conns {
		for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
			assertNoSecret(t, fmt.Sprintf("connection %d formatted with %s", i, format), fmt.Sprintf(format, conn), all...)
			assertNoSecret(t, fmt.Sprintf("pointer to connection %d formatted with %s", i, format), fmt.Sprintf(format, &conn), all...)
			if conn.Exec != nil {
				assertNoSecret(t, fmt.Sprintf("exec of connection %d formatted with %s", i, format), fmt.Sprintf(format, conn.Exec), all...)
				assertNoSecret(t, fmt.Sprintf("exec value of connection %d formatted with %s", i, format), fmt.Sprintf(format, *conn.Exec), all...)
			}
		}
		if err := conn.Validate(); err != nil {
			assertNoSecret(t, fmt.Sprintf("connection %d: Validate()", i), err.Error(), all...)
		}
		if _, err := conn.RESTConfig(); err != nil {
			assertNoSecret(t, fmt.Sprintf("connection %d: RESTConfig()", i), err.Error(), all...)
		} else {
			t.Errorf("connection %d: RESTConfig() succeeded, want an error to inspect", i)
		}
		if _, err := conn.Fingerprint(); err != nil {
			assertNoSecret(t, fmt.Sprintf("connection %d: Fingerprint()", i), err.Error(), all...)
		}
		if _, err := NewCache(CacheOptions{}).Get(t.Context(), "east", conn); err != nil {
			assertNoSecret(t, fmt.Sprintf("connection %d: Cache.Get()", i), err.Error(), all...)
		}
	}
}

func TestConnectionString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		conn Connection
		want string
	}{
		{Connection{KubeconfigPath: "~/.kube/config", Context: "east"}, "kubeconfig ~/.kube/config context east"},
		{Connection{Kubeconfig: []byte("x"), Insecure: true}, "inline kubeconfig, insecure"},
		{Connection{Host: "10.0.0.1:6443", Token: secretToken, ClusterCACertificate: []byte("ca")}, "host https://10.0.0.1:6443 with token, CA set"},
		{Connection{Host: "https://h", Exec: &ExecConfig{Command: "aws", Env: map[string]string{"B": secretEnv, "A": "1"}}, ProxyURL: "http://u:" + secretProxy + "@p:3128"}, "host https://h with exec plugin aws (env A, B), proxy http://u:xxxxx@p:3128"},
		{Connection{Host: "https://u:p@h", ClientKey: []byte("k"), TLSServerName: "api"}, "host [invalid] with client certificate, TLS server name api"},
		{Connection{}, "empty connection"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.conn.String()); diff != "" {
			t.Errorf("String() (-want +got):\n%s", diff)
		}
	}
}
