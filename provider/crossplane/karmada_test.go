package crossplane_test

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestKarmadaGroups runs the provider and the control plane in-process in
// Karmada's groups (as `crossplane --api-groups=karmada` and `controlplane
// --api-groups=karmada` choose them) against a real host and member: a
// Cluster managed resource becomes a cluster.karmada.io Cluster whose
// credentials Secret is in karmada-cluster (the one namespace the
// Karmada-mode control plane reads; none is written in flotilla-system),
// and a PropagationPolicy and a Manifest put the Deployment in the member.
//
// The attack: a ProviderConfig naming a host whose control plane serves
// flotilla's groups is refused, saying which groups it serves and the flag
// to give, and nothing is written there.
func TestKarmadaGroups(t *testing.T) {
	// As the commands do at start, before any scheme is built; the other
	// tests of this package expect flotilla's groups and none runs in
	// parallel.
	apis.Use(apis.KarmadaGroups)
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
	e := startEnvWith(t, 1)
	m := e.fleet[0]
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name + "-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, m.KubeconfigPath)},
	})
	cl := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: m.Name}}
	cl.Spec.ForProvider = v1alpha1.ClusterParameters{APIEndpoint: m.Host, CredentialsSecretRef: &v1alpha1.CredentialsSecretRef{Name: m.Name + "-kubeconfig"}}
	testkit.MustCreate(t, e.mgmt, cl)
	pp := &v1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	testkit.MustYAML(t, pp, `
spec:
  forProvider:
    resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    placement:
      clusterAffinity: {clusterNames: [%s]}
`, m.Name)
	testkit.MustCreate(t, e.mgmt, pp)
	testkit.MustCreate(t, e.mgmt, manifest(t, "web", 2, nil))

	poll(t, "the Deployment in the member", func() (bool, string) {
		got, err := memberDeployments(t, e.members, "web")
		if err != nil {
			return false, err.Error()
		}
		d := got[m.Name]
		return d != nil && ptr.Deref(d.Spec.Replicas, 0) == 2, describe(got)
	})
	host := &unstructured.Unstructured{}
	host.SetAPIVersion("cluster.karmada.io/v1alpha1")
	host.SetKind("Cluster")
	if err := e.mgmt.Get(t.Context(), client.ObjectKey{Name: m.Name}, host); err != nil {
		t.Fatalf("no cluster.karmada.io Cluster %s in the host: %v", m.Name, err)
	}
	if ns, _, _ := unstructured.NestedString(host.Object, "spec", "secretRef", "namespace"); ns != "karmada-cluster" {
		t.Errorf("host Cluster's spec.secretRef.namespace = %q, want karmada-cluster", ns)
	}
	if err := e.mgmt.Get(t.Context(), client.ObjectKey{Namespace: "karmada-cluster", Name: m.Name}, &corev1.Secret{}); err != nil {
		t.Errorf("credentials Secret karmada-cluster/%s: %v", m.Name, err)
	}
	if err := e.mgmt.Get(t.Context(), client.ObjectKey{Namespace: "flotilla-system", Name: m.Name}, &corev1.Secret{}); err == nil {
		t.Errorf("a credentials Secret was written in flotilla-system, which the Karmada-mode control plane never reads")
	}

	// A host whose control plane serves flotilla's groups.
	other := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "flotillahost"}).Clusters[0]
	scheme, err := crossplane.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	otherClient := controllertest.Client(t, other.RESTConfig(), scheme)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	testkit.MustYAML(t, crd, `
metadata: {name: clusters.cluster.flotilla.io}
spec:
  group: cluster.flotilla.io
  names: {kind: Cluster, listKind: ClusterList, plural: clusters, singular: cluster}
  scope: Cluster
  versions:
  - {name: v1alpha1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`)
	testkit.MustCreate(t, otherClient, crd)
	testkit.MustCreate(t, e.mgmt, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "flotilla-host"},
		Data:       map[string][]byte{"kubeconfig": testkit.ReadFile(t, other.KubeconfigPath)},
	})
	testkit.MustCreate(t, e.mgmt, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "flotilla-host"},
		Spec: v1alpha1.ProviderConfigSpec{Fleet: testFleet, Credentials: v1alpha1.ProviderCredentials{
			Source:    xpv2.CredentialsSourceSecret,
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "default", Name: "flotilla-host"}, Key: "kubeconfig"},
		}},
	})
	wrong := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wrong-host"}}
	wrong.Spec.ForProvider = cl.Spec.ForProvider
	wrong.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: "ProviderConfig", Name: "flotilla-host"}
	testkit.MustCreate(t, e.mgmt, wrong)
	syncedFalse(t, e.mgmt, wrong, "the host serves flotilla's API groups (cluster.flotilla.io), not karmada's (cluster.karmada.io): run the crossplane provider with --api-groups=flotilla")
	var nss corev1.NamespaceList
	if err := otherClient.List(t.Context(), &nss); err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if ns.Name == "karmada-cluster" || ns.Name == "flotilla-system" {
			t.Errorf("the refused host got the namespace %s (for the member's credentials)", ns.Name)
		}
	}
}
