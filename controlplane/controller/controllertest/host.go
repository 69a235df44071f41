package controllertest

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// Scheme returns the control plane's scheme (shared.NewScheme) and fails
// the test if it cannot be built.
func Scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	scheme, err := shared.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// Client returns a client of cfg for the kinds of scheme.
func Client(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Host returns a client of host, for the kinds of scheme, once flotilla's
// CRDs are installed and established there.
func Host(t testing.TB, host *testenv.Cluster, scheme *runtime.Scheme) client.Client {
	t.Helper()
	hub := Client(t, host.RESTConfig(), scheme)
	if err := crd.Install(t.Context(), hub, time.Minute); err != nil {
		t.Fatal(err)
	}
	return hub
}

// SystemHost is Host with the control plane's scheme and its system
// credentials namespace (shared.CredentialsNamespace, which follows the
// API groups) created, where member credentials
// are kept.
func SystemHost(t testing.TB, host *testenv.Cluster) client.Client {
	t.Helper()
	hub := Host(t, host, Scheme(t))
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.CredentialsNamespace()}})
	return hub
}

// TokenData is the Secret data with m's bearer token and CA, as a Cluster's
// secretRef holds them.
func TokenData(m *testenv.Cluster) map[string][]byte {
	return map[string][]byte{clusterv1.SecretKeyToken: []byte(m.Token), clusterv1.SecretKeyCA: m.CAData}
}

// Register creates, on the host, the Secret secretNamespace/name holding data
// and the Cluster name whose apiEndpoint is endpoint and whose secretRef
// names that Secret.
func Register(t testing.TB, hub client.Client, name, endpoint, secretNamespace string, data map[string][]byte) {
	t.Helper()
	testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: name}, Data: data})
	testkit.MustCreate(t, hub, ClusterObject(name, endpoint, secretNamespace))
}

// RegisterMember registers m under its own name with its token and CA, the
// Secret in shared.CredentialsNamespace.
func RegisterMember(t testing.TB, hub client.Client, m *testenv.Cluster) {
	t.Helper()
	Register(t, hub, m.Name, m.Host, shared.CredentialsNamespace(), TokenData(m))
}

// ClusterObject is the Cluster name reaching endpoint with the credentials of
// Secret secretNamespace/name.
func ClusterObject(name, endpoint, secretNamespace string) *clusterv1.Cluster {
	return &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       api.ClusterSpec{APIEndpoint: endpoint, SecretRef: &api.LocalSecretReference{Namespace: secretNamespace, Name: name}},
	}
}

// MemberClients returns a client of each member, by cluster name, and the
// names in the members' order.
func MemberClients(t testing.TB, members []*testenv.Cluster, scheme *runtime.Scheme) (map[string]client.Client, []string) {
	t.Helper()
	clients := map[string]client.Client{}
	names := make([]string, len(members))
	for i, m := range members {
		clients[m.Name], names[i] = Client(t, m.RESTConfig(), scheme), m.Name
	}
	return clients, names
}
