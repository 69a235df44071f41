package crossplane_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// tenantKubeconfig is the kubeconfig of server with its one user changed
// by mod: what a tenant writes into a Secret of their namespace.
func tenantKubeconfig(t *testing.T, path string, mod func(*clientcmdapi.AuthInfo)) []byte {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range cfg.AuthInfos {
		mod(user)
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// syncedFalse waits until the managed resource is Synced=False with a
// message that contains want.
func syncedFalse(t *testing.T, c client.Client, mg interface {
	client.Object
	GetCondition(xpv2.ConditionType) xpv2.Condition
}, want string,
) {
	t.Helper()
	poll(t, fmt.Sprintf("%T %s/%s refused with %q", mg, mg.GetNamespace(), mg.GetName(), want), func() (bool, string) {
		cond, err := conditionOf(t, c, mg, xpv2.TypeSynced)
		if err != nil {
			return false, err.Error()
		}
		return cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, want), fmt.Sprintf("%+v", cond)
	})
}

// TestTenantCredentialsRefused: what a tenant writes in a namespace never
// runs a command or reads a file in the provider or the control plane, and
// never borrows the provider's identity. Through the real crossplane-runtime
// reconcilers against a real management apiserver:
//   - a namespaced ProviderConfig with InjectedIdentity is refused (only a
//     ClusterProviderConfig may use it) and no host policy is written;
//   - a namespaced ProviderConfig whose host kubeconfig has an exec plugin
//     is refused naming the user and exec, and the plugin's marker file
//     never appears; so is a ClusterProviderConfig without the operator's
//     --allow-kubeconfig-exec-and-files;
//   - a Cluster managed resource whose member kubeconfig has a tokenFile is
//     refused, and neither the host Cluster nor its Secret is written.
func TestTenantCredentialsRefused(t *testing.T) {
	e := startEnvWith(t, 1)
	ctx := t.Context()
	ns := "tenant-a"
	testkit.MustCreate(t, e.mgmt, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mgmtKubeconfig := e.fleet[0].KubeconfigPath // a real kubeconfig: refused before it is used
	marker := filepath.Join(t.TempDir(), "exec-ran")
	execUser := func(u *clientcmdapi.AuthInfo) {
		u.Token, u.ClientCertificateData, u.ClientKeyData = "", nil, nil
		u.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "/bin/sh", Args: []string{"-c", "touch " + marker}}
	}
	policy := func(name, kind, config string) *v1alpha1.PropagationPolicy {
		pp := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		testkit.MustYAML(t, pp, `
spec:
  providerConfigRef: {kind: %s, name: %s}
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
`, kind, config)
		return pp
	}

	t.Log("a namespaced ProviderConfig may not inject the provider's identity")
	testkit.MustCreate(t, e.mgmt, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "injected"},
		Spec:       v1alpha1.ProviderConfigSpec{Fleet: testFleet, Credentials: v1alpha1.ProviderCredentials{Source: xpv2.CredentialsSourceInjectedIdentity}},
	})
	injected := policy("injected", "ProviderConfig", "injected")
	testkit.MustCreate(t, e.mgmt, injected)
	syncedFalse(t, e.mgmt, injected, "ProviderConfig "+ns+"/injected: spec.credentials.source InjectedIdentity is only allowed in a ClusterProviderConfig")

	t.Log("a namespaced ProviderConfig's exec plugin never runs")
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-exec"},
		Data:       map[string][]byte{"kubeconfig": tenantKubeconfig(t, mgmtKubeconfig, execUser)},
	})
	testkit.MustCreate(t, e.mgmt, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exec"},
		Spec: v1alpha1.ProviderConfigSpec{Fleet: testFleet, Credentials: v1alpha1.ProviderCredentials{
			Source:    xpv2.CredentialsSourceSecret,
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: ns, Name: "host-exec"}, Key: "kubeconfig"},
		}},
	})
	viaExec := policy("exec", "ProviderConfig", "exec")
	testkit.MustCreate(t, e.mgmt, viaExec)
	syncedFalse(t, e.mgmt, viaExec, `credentials secret tenant-a/host-exec key "kubeconfig": invalid connection: kubeconfig: user`)
	syncedFalse(t, e.mgmt, viaExec, "sets exec")

	t.Log("nor does a ClusterProviderConfig's, unless the operator allows it")
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: "host-exec"},
		Data:       map[string][]byte{"kubeconfig": tenantKubeconfig(t, mgmtKubeconfig, execUser)},
	})
	testkit.MustCreate(t, e.mgmt, &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "exec"},
		Spec: v1alpha1.ProviderConfigSpec{Fleet: testFleet, Credentials: v1alpha1.ProviderCredentials{
			Source:    xpv2.CredentialsSourceSecret,
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "crossplane-system", Name: "host-exec"}, Key: "kubeconfig"},
		}},
	})
	viaClusterExec := policy("cluster-exec", "ClusterProviderConfig", "exec")
	testkit.MustCreate(t, e.mgmt, viaClusterExec)
	syncedFalse(t, e.mgmt, viaClusterExec, "sets exec")

	t.Log("a Cluster managed resource's member kubeconfig may not read a token file")
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": tenantKubeconfig(t, e.fleet[0].KubeconfigPath, func(u *clientcmdapi.AuthInfo) {
			u.Token, u.TokenFile = "", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		})},
	})
	cl := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stolen-token"}}
	cl.Spec.ForProvider = v1alpha1.ClusterParameters{
		APIEndpoint:          e.fleet[0].Host,
		CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: "member-kubeconfig"},
	}
	testkit.MustCreate(t, e.mgmt, cl)
	syncedFalse(t, e.mgmt, cl, `spec.forProvider.credentialsSecretRef: secret tenant-a/member-kubeconfig key "kubeconfig": invalid connection: kubeconfig: user`)
	syncedFalse(t, e.mgmt, cl, "sets tokenFile")

	// Each refusal above was reported after at least one full reconcile;
	// give the provider a few more before looking for side effects.
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("an exec plugin from a tenant's kubeconfig ran: stat %s: %v", marker, err)
	}
	var pps policyv1.PropagationPolicyList
	if err := e.mgmt.List(ctx, &pps, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pps.Items) > 0 {
		t.Errorf("host policies written through refused provider configs: %d, first %s", len(pps.Items), pps.Items[0].Name)
	}
	for _, obj := range []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "stolen-token"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: crossplane.CredentialsNamespace(), Name: "stolen-token"}},
	} {
		if err := e.mgmt.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s written to the host from a refused Cluster managed resource: %v", obj, obj.GetName(), err)
		}
	}
}
