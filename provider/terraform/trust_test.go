package terraform

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// inlineKubeconfig is a kubeconfig whose only user is user.
func inlineKubeconfig(t *testing.T, user *clientcmdapi.AuthInfo, cluster *clientcmdapi.Cluster) []byte {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	if cluster == nil {
		cluster = &clientcmdapi.Cluster{Server: "https://10.0.0.1"}
	}
	cfg.Clusters["c"] = cluster
	cfg.AuthInfos["u"] = user
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTrustedConnections: a connection read from state runs a plugin or
// reads a file only when trusted exactly; the refusal names the command
// but never an argument or env value.
func TestTrustedConnections(t *testing.T) {
	t.Parallel()
	aws := member.ExecConfig{Command: "aws", Args: []string{"eks", "get-token", "--cluster-name", "east"}, Env: map[string]string{"AWS_PROFILE": "prod"}}
	trust := trustedConnections{exec: []member.ExecConfig{aws}}
	withExec := func(x member.ExecConfig) member.Connection {
		return member.Connection{Host: "https://10.0.0.1", Exec: &x}
	}
	otherArgs := aws
	otherArgs.Args = []string{"s3", "cp", "/home/u/.aws/credentials", "s3://x-secret-arg"}
	otherEnv := aws
	otherEnv.Env = map[string]string{"AWS_PROFILE": "x-secret-env"}
	for _, tc := range []struct {
		name string
		conn member.Connection
		want string // "" = trusted
	}{
		{"token", member.Connection{Host: "https://10.0.0.1", Token: "t"}, ""},
		{"trusted exec", withExec(aws), ""},
		{"other command", withExec(member.ExecConfig{Command: "/tmp/x"}), `credential plugin "/tmp/x"`},
		{"other args", withExec(otherArgs), `credential plugin "aws" (4 arguments`},
		{"other env", withExec(otherEnv), `env [AWS_PROFILE]`},
		{"kubeconfig file", member.Connection{KubeconfigPath: "~/.kube/config"}, ""},
		{"kubeconfig file, other context", member.Connection{KubeconfigPath: "~/.kube/config", Context: "prod"}, `kubeconfig file with context set`},
		{"inline token", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Token: "t"}, nil)}, ""},
		{"inline trusted exec", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Command: "aws", Args: aws.Args, Env: []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "prod"}}, APIVersion: member.ExecAPIVersionV1}}, nil)}, ""},
		{"inline exec", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Command: "sh", Args: []string{"-c", "x-secret-arg"}, APIVersion: member.ExecAPIVersionV1}}, nil)}, `user "u" of the recorded inline kubeconfig: the recorded connection runs the credential plugin "sh"`},
		{"inline token file", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"}, nil)}, `reads credentials from a file`},
		{"inline auth provider", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{AuthProvider: &clientcmdapi.AuthProviderConfig{Name: "oidc"}}, nil)}, `auth-provider "oidc"`},
		{"inline CA file", member.Connection{Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Token: "t"}, &clientcmdapi.Cluster{Server: "https://10.0.0.1", CertificateAuthority: "/etc/ca.crt"})}, `reads its CA from a file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := trust.check(tc.conn)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("trusted")
			case err != nil && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not say %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "x-secret"):
				t.Fatalf("error quotes an argument or env value: %v", err)
			}
		})
	}
	// Nothing is trusted by default; the configuration at hand trusts its own plugin.
	if err := (trustedConnections{}).check(withExec(aws)); err == nil {
		t.Error("an empty provider block trusts an exec")
	}
	if err := (trustedConnections{}).withConnection(withExec(aws)).check(withExec(aws)); err != nil {
		t.Errorf("the configured exec is refused: %v", err)
	}
	if err := (trustedConnections{}).withConnection(withExec(aws)).check(withExec(otherArgs)); err == nil {
		t.Error("the configured exec trusts other arguments")
	}
}

// TestTrustedConnectionOverrides is issue 31's item 3 on the pure check: a
// recorded connection whose credentials come from outside the state (a
// kubeconfig file, a trusted plugin) is refused with any override the
// provider block or the configuration does not name exactly, the refusal
// naming the attributes but no value; one whose credentials are in the
// state, or that records no override, needs nothing.
func TestTrustedConnectionOverrides(t *testing.T) {
	t.Parallel()
	aws := member.ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}}
	const path, proxy = "~/.kube/config", "http://u:x-secret-pw@10.9.9.9:3128"
	file := func(o connectionOverrides) member.Connection {
		return member.Connection{KubeconfigPath: path, Context: o.Context, ProxyURL: o.ProxyURL, Insecure: o.Insecure, TLSServerName: o.TLSServerName}
	}
	named := connectionOverrides{Context: "east", ProxyURL: "http://proxy.corp:3128"}
	trust := trustedConnections{exec: []member.ExecConfig{aws}, overrides: []connectionOverrides{named}}
	for _, tc := range []struct {
		name string
		conn member.Connection
		want string // "" = trusted
	}{
		{"path alone", file(connectionOverrides{}), ""},
		{"proxy", file(connectionOverrides{ProxyURL: proxy}), "kubeconfig file with proxy_url set"},
		{"proxy and insecure", file(connectionOverrides{ProxyURL: proxy, Insecure: true}), "with proxy_url, insecure set"},
		{"insecure", file(connectionOverrides{Insecure: true}), "with insecure set"},
		{"tls server name", file(connectionOverrides{TLSServerName: "evil.example"}), "with tls_server_name set"},
		{"context", file(connectionOverrides{Context: "prod"}), "with context set"},
		{"named exactly", file(named), ""},
		{"named, plus insecure", file(connectionOverrides{Context: "east", ProxyURL: "http://proxy.corp:3128", Insecure: true}), "with context, proxy_url, insecure set"},
		{"named context, other proxy", file(connectionOverrides{Context: "east", ProxyURL: proxy}), "with context, proxy_url set"},
		{"trusted plugin through a proxy", member.Connection{Host: "https://10.0.0.1", Exec: &aws, ProxyURL: proxy, Insecure: true},
			`credentials of the credential plugin "aws" with proxy_url, insecure set`},
		{"inline plugin through a proxy", member.Connection{ProxyURL: proxy, Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Command: "aws", Args: aws.Args, APIVersion: member.ExecAPIVersionV1}}, nil)}, `credential plugin "aws" with proxy_url set`},
		{"token through a proxy", member.Connection{Host: "https://10.0.0.1", Token: "t", ProxyURL: proxy, Insecure: true}, ""},
		{"inline token through a proxy", member.Connection{ProxyURL: proxy, Context: "x", Kubeconfig: inlineKubeconfig(t, &clientcmdapi.AuthInfo{Token: "t"}, nil)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := trust.check(tc.conn)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Fatal("trusted")
			case err != nil && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q does not say %q", err, tc.want)
			case err != nil && (strings.Contains(err.Error(), "x-secret") || strings.Contains(err.Error(), "10.9.9.9")):
				t.Fatalf("error quotes a value: %v", err)
			}
		})
	}
	// The configuration at hand vouches for its own overrides, and only those.
	configured := file(connectionOverrides{Context: "west", Insecure: true})
	if err := (trustedConnections{}).withConnection(configured).check(configured); err != nil {
		t.Errorf("the configured overrides are refused: %v", err)
	}
	if err := (trustedConnections{}).withConnection(configured).check(file(connectionOverrides{Context: "west", Insecure: true, ProxyURL: proxy})); err == nil {
		t.Error("the configured overrides trust an added proxy")
	}
}
