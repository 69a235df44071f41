package webhook_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
)

// TestWebhookRefusesTenantCredentials: the host refuses a Cluster whose
// spec.secretRef or spec.impersonatorSecretRef leaves flotilla-system
// (the cluster proxy reads the impersonator's token with the control
// plane's identity, as the credentials), and one whose existing Secret
// holds a kubeconfig that would run a command or read a file, naming the
// field, the Secret and the kubeconfig entry; a Cluster whose Secret does
// not exist yet, or holds inline credentials, is stored.
func TestWebhookRefusesTenantCredentials(t *testing.T) {
	hub := startHost(t)
	ctx := t.Context()
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flotilla-system"}}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := func(user *clientcmdapi.AuthInfo) []byte {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["member"] = &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", InsecureSkipTLSVerify: true}
		cfg.AuthInfos["tenant"] = user
		cfg.Contexts["main"] = &clientcmdapi.Context{Cluster: "member", AuthInfo: "tenant"}
		cfg.CurrentContext = "main"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	secret := func(name string, kc []byte) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: name}, Data: map[string][]byte{clusterv1.SecretKeyKubeconfig: kc}}
		if err := hub.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cluster := func(name, namespace string) *clusterv1.Cluster {
		return &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       api.ClusterSpec{APIEndpoint: "https://10.0.0.1:6443", SecretRef: &api.LocalSecretReference{Namespace: namespace, Name: name}},
		}
	}
	impersonatedBy := func(c *clusterv1.Cluster, namespace string) *clusterv1.Cluster {
		c.Spec.ImpersonatorSecretRef = &api.LocalSecretReference{Namespace: namespace, Name: c.Name + "-impersonator"}
		return c
	}
	secret("exec", kubeconfig(&clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1"}}))
	secret("token-file", kubeconfig(&clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"}))
	secret("inline", kubeconfig(&clientcmdapi.AuthInfo{Token: "t0ken"}))

	for _, tt := range []struct {
		cluster *clusterv1.Cluster
		want    []string
	}{
		{cluster("elsewhere", "tenant-a"), []string{`Cluster.cluster.flotilla.io "elsewhere" is invalid`, `spec.secretRef.namespace: Invalid value: "tenant-a": must be flotilla-system`}},
		{cluster("exec", "flotilla-system"), []string{`spec.secretRef: Invalid value: "flotilla-system/exec"`, `secret flotilla-system/exec`, `kubeconfig: user "tenant" sets exec`}},
		{cluster("token-file", "flotilla-system"), []string{`spec.secretRef: Invalid value: "flotilla-system/token-file"`, `user "tenant" sets tokenFile`}},
		{impersonatedBy(cluster("impersonated", "flotilla-system"), "tenant-a"), []string{`Cluster.cluster.flotilla.io "impersonated" is invalid`,
			`spec.impersonatorSecretRef.namespace: Invalid value: "tenant-a": must be flotilla-system`}},
	} {
		err := hub.Create(ctx, tt.cluster)
		if err == nil || !apierrors.IsInvalid(err) {
			t.Errorf("create Cluster %s: got %v, want Invalid", tt.cluster.Name, err)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("create Cluster %s: %v\nwant it to say %q", tt.cluster.Name, err, want)
			}
		}
		if strings.Contains(err.Error(), "t0ken") {
			t.Errorf("refusal quotes a credential: %v", err)
		}
	}
	for _, name := range []string{"inline", "not-written-yet"} {
		if err := hub.Create(ctx, cluster(name, "flotilla-system")); err != nil {
			t.Errorf("create Cluster %s: %v", name, err)
		}
	}
}
