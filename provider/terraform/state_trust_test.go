package terraform

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// trustConfig declares one member, reached with a token, and a ConfigMap
// placed there. providerExtra goes into the provider block.
func trustConfig(c *testenv.Cluster, providerExtra string) string {
	return requiredProvidersHCL + providerHCL("trust", providerExtra) + memberClusterHCL("east", c, "") +
		policyHCL("app", "default", "v1", "ConfigMap", []string{"east"}, "") + `
resource "flotilla_manifest" "app" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "app", namespace = "default" }
    data       = { v = "1" }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.app]
}
`
}

// editState rewrites the local state file with edit applied to the
// attributes of each resource of the given type.
func editState(t *testing.T, d *tfDriver, edit map[string]func(attrs map[string]any)) {
	t.Helper()
	file := filepath.Join(d.dir, "terraform.tfstate")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state["resources"].([]any) {
		res := r.(map[string]any)
		if f, ok := edit[res["type"].(string)]; ok {
			for _, in := range res["instances"].([]any) {
				f(in.(map[string]any)["attributes"].(map[string]any))
			}
		}
	}
	if b, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAccStateExecNotRun is the issue's "state can make refresh run
// commands" with the real terraform: a state edited so that the member is
// reached through a credential plugin (one that creates a marker file and
// then prints the real token) does not run it on refresh or destroy, and
// says why; destroy deletes nothing. Once the provider block trusts
// exactly that plugin, destroy runs it (the marker appears) and succeeds.
func TestAccStateExecNotRun(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	d.write(trustConfig(c, ""))
	d.mustRun("apply", "-auto-approve", "-no-color")

	marker := filepath.Join(t.TempDir(), "exec-ran")
	credential := fmt.Sprintf(`{"apiVersion":%q,"kind":"ExecCredential","status":{"token":%q}}`, member.ExecAPIVersionV1, c.Token)
	script := fmt.Sprintf("touch %s; printf '%%s' '%s'", marker, credential)
	args := []string{"-c", script}
	recorded, err := json.Marshal(member.Connection{Host: c.Host, ClusterCACertificate: c.CAData,
		Exec: &member.ExecConfig{APIVersion: member.ExecAPIVersionV1, Command: "/bin/sh", Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	editState(t, d, map[string]func(map[string]any){
		"flotilla_manifest": func(a map[string]any) {
			a["connections"] = map[string]any{"east": string(recorded)}
		},
		"flotilla_cluster": func(a map[string]any) {
			a["token"] = nil
			a["exec"] = map[string]any{"api_version": member.ExecAPIVersionV1, "command": "/bin/sh", "args": args, "env": nil}
		},
	})
	ran := func() bool { _, err := os.Stat(marker); return err == nil }

	out := d.mustRun("plan", "-refresh-only", "-no-color")
	if ran() {
		t.Fatal("refresh ran the credential plugin recorded in state")
	}
	for _, want := range []string{
		"Cannot refresh cluster east",
		`Cannot refresh v1, Kind=ConfigMap, default/app in cluster east`,
		`runs the credential plugin "/bin/sh" (2 arguments, env [])`,
	} {
		if !wrappedMessage(want).MatchString(out) {
			t.Errorf("the refresh does not say %q:\n%s", want, out)
		}
	}

	out, code := d.run("destroy", "-auto-approve", "-no-color")
	if code == 0 || !wrappedMessage("a recorded connection is not trusted").MatchString(out) ||
		!wrappedMessage("no entry of the provider block's trusted_exec matches exactly").MatchString(out) {
		t.Fatalf("destroy with an untrusted recorded plugin exited %d:\n%s", code, out)
	}
	if ran() {
		t.Fatal("destroy ran the credential plugin recorded in state")
	}
	cs := c.Clientset(t)
	if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "app", metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused destroy deleted the ConfigMap (or it cannot be read): %v", err)
	}

	argsHCL, _ := json.Marshal(args)
	d.write(trustConfig(c, fmt.Sprintf(`trusted_exec = [{ command = "/bin/sh", args = %s }]`, argsHCL)))
	d.mustRun("destroy", "-auto-approve", "-no-color")
	if !ran() {
		t.Fatal("the trusted plugin never ran, so this test could not tell a refusal from a plugin that does not work")
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the trusted destroy left the ConfigMap: %v", err)
	}
}

// TestAccDataSourcesKeepNoCredentials: flotilla_placement and
// flotilla_cluster_status use the member's token and keep it out of state
// (the resource flotilla_cluster still records its own).
func TestAccDataSourcesKeepNoCredentials(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	d.write(trustConfig(c, "") + fmt.Sprintf(`
data "flotilla_placement" "app" {
  manifest             = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "app", namespace = "default" } }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.app]
}
data "flotilla_cluster_status" "east" {
  name                   = "east"
  host                   = %s
  token                  = %s
  cluster_ca_certificate = %s
}
output "placement" { value = data.flotilla_placement.app.placement }
output "ready" { value = data.flotilla_cluster_status.east.ready }
`, quoteHCL(c.Host), quoteHCL(c.Token), quoteHCL(string(c.CAData))))
	d.mustRun("apply", "-auto-approve", "-no-color")
	out := d.mustRun("output", "-json")
	if !strings.Contains(out, `"east": 0`) && !strings.Contains(out, `"east":0`) || !strings.Contains(out, `"value": true`) {
		t.Fatalf("the data sources did not read the member:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Mode, Type string
			Instances  []struct {
				Attributes json.RawMessage `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	data := 0
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			holds := strings.Contains(string(in.Attributes), c.Token)
			switch {
			case r.Mode == "data" && holds:
				t.Errorf("data source %s stores the member's token: %.400s", r.Type, in.Attributes)
			case r.Type == "flotilla_cluster" && !holds:
				t.Errorf("the state file does not hold the token even where it must; the check above cannot fail")
			}
			if r.Mode == "data" {
				data++
			}
		}
	}
	if data != 2 {
		t.Fatalf("the state holds %d data sources, want 2", data)
	}
	d.mustRun("destroy", "-auto-approve", "-no-color")
}

// attacker stands for the endpoints a state editor controls: an HTTP proxy
// that answers CONNECT and then poses as the member with its own
// certificate, and an apiserver of theirs that an operator's kubeconfig
// context happens to reach. It records every connection and every bearer
// token it is sent.
type attacker struct {
	proxyURL, server string
	mu               sync.Mutex
	hits             []string
	tokens           []string
}

func (a *attacker) record(hit string, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hits = append(a.hits, hit)
	if auth := r.Header.Get("Authorization"); auth != "" {
		a.tokens = append(a.tokens, auth)
	}
}

// reset forgets what reached the attacker, so each case counts its own.
func (a *attacker) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hits, a.tokens = nil, nil
}

// seen is what reached the attacker since the last reset.
func (a *attacker) seen() (hits, tokens []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.hits), slices.Clone(a.tokens)
}

func startAttacker(t *testing.T) *attacker {
	t.Helper()
	a := &attacker{}
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.record("server "+r.Method+" "+r.URL.Path, r)
		http.Error(w, "attacker", http.StatusServiceUnavailable)
	}))
	t.Cleanup(server.Close)
	a.server = server.URL
	mitm := server.TLS.Clone()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.record("proxy "+r.Method+" "+r.Host, r)
		if r.Method != http.MethodConnect {
			http.Error(w, "attacker", http.StatusServiceUnavailable)
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
		_ = buf.Flush()
		tlsConn := tls.Server(conn, mitm)
		if tlsConn.Handshake() != nil {
			return // a client that checks the certificate stops here
		}
		inner, err := http.ReadRequest(bufio.NewReader(tlsConn))
		if err != nil {
			return
		}
		a.record("proxied "+inner.Method+" "+inner.URL.Path, inner)
		_, _ = tlsConn.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	}))
	t.Cleanup(proxy.Close)
	a.proxyURL = proxy.URL
	return a
}

// operatorKubeconfig writes the operator's kubeconfig: the current context
// reaches the member with its token, and a second context, "staging",
// sends the same user to the attacker's server (a cluster of someone
// else's, as kubeconfigs often hold).
func operatorKubeconfig(t *testing.T, c *testenv.Cluster, attackerServer string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["east"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	cfg.Clusters["staging"] = &clientcmdapi.Cluster{Server: attackerServer, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts["east"] = &clientcmdapi.Context{Cluster: "east", AuthInfo: "admin"}
	cfg.Contexts["staging"] = &clientcmdapi.Context{Cluster: "staging", AuthInfo: "admin"}
	cfg.CurrentContext = "east"
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestAccStateExecNotRunOverrides is issue 31's item 3 with the real
// terraform, beside TestAccStateExecNotRun: the member is declared with
// the operator's kubeconfig file, and the state is edited to keep that
// path while adding a proxy_url of the attacker's (alone, with insecure,
// with tls_server_name) or another context of the same file that reaches
// the attacker's server. Neither refresh nor destroy contacts the attacker
// (no CONNECT, no request, no token), each says which attribute of which
// cluster it refused, and destroy deletes nothing. Once the provider block
// names the proxy, destroy goes through it (and the proxy sees it), so the
// refusal is not a connection that cannot work.
func TestAccStateExecNotRunOverrides(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	f, _ := startMembers(t, 1)
	c := f.Clusters[0]
	evil := startAttacker(t)
	kubeconfig := operatorKubeconfig(t, c, evil.server)
	cluster := fmt.Sprintf(`
resource "flotilla_cluster" "east" {
  name       = "east"
  kubeconfig = { path = %q }
}
`, kubeconfig)
	config := func(providerExtra string) string {
		return requiredProvidersHCL + providerHCL("trust", providerExtra) + cluster +
			policyHCL("app", "default", "v1", "ConfigMap", []string{"east"}, "") + `
resource "flotilla_manifest" "app" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "app", namespace = "default" }
    data       = { v = "1" }
  }
  clusters             = [flotilla_cluster.east]
  propagation_policies = [flotilla_propagation_policy.app]
}
`
	}
	d.write(config(""))
	d.mustRun("apply", "-auto-approve", "-no-color")
	d.expectEmptyPlan()
	pristine, err := os.ReadFile(filepath.Join(d.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	cs := c.Clientset(t)

	// edited restores the state of the honest apply, then edits the
	// recorded connections of both resources.
	edited := func(t *testing.T, edit map[string]any) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(d.dir, "terraform.tfstate"), pristine, 0o600); err != nil {
			t.Fatal(err)
		}
		if len(edit) == 0 {
			return
		}
		conn := map[string]any{"kubeconfig_path": kubeconfig}
		maps.Copy(conn, edit)
		recorded, _ := json.Marshal(conn)
		editState(t, d, map[string]func(map[string]any){
			"flotilla_manifest": func(a map[string]any) {
				a["connections"] = map[string]any{"east": string(recorded)}
			},
			"flotilla_cluster": func(a map[string]any) {
				for k, v := range edit {
					if k == "context" {
						a["kubeconfig"].(map[string]any)["context"] = v
					} else {
						a[k] = v
					}
				}
			},
		})
	}

	for _, tc := range []struct {
		name  string
		edit  map[string]any // member.Connection JSON fields
		attrs string         // what the refusal names
	}{
		{"proxy", map[string]any{"proxy_url": evil.proxyURL}, "proxy_url"},
		{"proxy and insecure", map[string]any{"proxy_url": evil.proxyURL, "insecure": true}, "proxy_url, insecure"},
		{"proxy and tls server name", map[string]any{"proxy_url": evil.proxyURL, "tls_server_name": "attacker.example"}, "proxy_url, tls_server_name"},
		{"context", map[string]any{"context": "staging"}, "context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evil.reset()
			edited(t, tc.edit)
			out, code := d.run("plan", "-refresh-only", "-no-color")
			hits, tokens := evil.seen()
			if len(hits) > 0 || len(tokens) > 0 {
				t.Fatalf("the refresh reached the attacker: %v (tokens sent: %d)\n%s", hits, len(tokens), out)
			}
			if code != 0 {
				t.Fatalf("the refresh failed (exit %d) instead of keeping the state:\n%s", code, out)
			}
			for _, want := range []string{
				"Cannot refresh cluster east",
				"Cannot refresh v1, Kind=ConfigMap, default/app in cluster east",
				"the kubeconfig file with " + tc.attrs + " set",
			} {
				if !wrappedMessage(want).MatchString(out) {
					t.Errorf("the refresh does not say %q:\n%s", want, out)
				}
			}
			out, code = d.run("destroy", "-auto-approve", "-no-color")
			hits, tokens = evil.seen()
			if len(hits) > 0 || len(tokens) > 0 {
				t.Fatalf("the destroy reached the attacker: %v (tokens sent: %d)\n%s", hits, len(tokens), out)
			}
			if code == 0 || !wrappedMessage("a recorded connection is not trusted").MatchString(out) ||
				!wrappedMessage("cluster east: the recorded connection sends the credentials of the kubeconfig file with "+tc.attrs+" set").MatchString(out) {
				t.Fatalf("destroy with an edited connection exited %d:\n%s", code, out)
			}
			if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "app", metav1.GetOptions{}); err != nil {
				t.Fatalf("the refused destroy deleted the ConfigMap (or it cannot be read): %v", err)
			}
		})
	}

	// Named by the provider block, the recorded proxy is used (its CONNECT
	// arrives, and the attacker's certificate stops the client there): the
	// refusals above were the trust check, not a proxy the client ignores.
	evil.reset()
	edited(t, map[string]any{"proxy_url": evil.proxyURL})
	d.write(config(fmt.Sprintf(`trusted_connection_overrides = [{ proxy_url = %q }]`, evil.proxyURL)))
	_, _ = d.run("plan", "-refresh-only", "-no-color")
	if hits, tokens := evil.seen(); len(hits) == 0 || len(tokens) > 0 {
		t.Fatalf("with the proxy named by the provider block, the attacker saw %v and %d tokens; want a CONNECT and no token", hits, len(tokens))
	}
	edited(t, nil)
	d.write(config(""))
	d.mustRun("destroy", "-auto-approve", "-no-color")
}
