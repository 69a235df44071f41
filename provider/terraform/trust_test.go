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
		{"kubeconfig file", member.Connection{KubeconfigPath: "~/.kube/config", Context: "prod"}, ""},
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
