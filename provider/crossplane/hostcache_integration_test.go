package crossplane

import (
	"context"
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
	"github.com/flotilla-io/terraform-provider-flotilla/package/crds"
	"github.com/flotilla-io/terraform-provider-flotilla/provider/crossplane/apis/v1alpha1"
)

// TestHostClientsBounded attacks the host-client cache as a tenant with
// rights in their own namespace: one namespaced ProviderConfig after
// another, each with its own kubeconfig Secret and a managed resource that
// uses it, on a real apiserver. The provider holds at most the cache's
// bound of clients; a config whose Secret changes keeps one client, not
// two; a deleted config's client goes when its reconciler sees it gone.
func TestHostClientsBounded(t *testing.T) {
	fleet := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly})
	mgmt := fleet.Clusters[0]
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	kube := controllertest.Host(t, mgmt, scheme)
	ctx := t.Context()
	if err := crds.Install(ctx, kube, time.Minute); err != nil {
		t.Fatal(err)
	}
	const bound, configs = 4, 10
	hosts := newHostConnector(kube, scheme, nil, false)
	hosts.clients = newHostCache(bound)

	kubeconfig := testkit.ReadFile(t, mgmt.KubeconfigPath)
	testkit.MustCreate(t, kube, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}})
	mrs := make([]*v1alpha1.OverridePolicy, configs)
	for i := range configs {
		name := fmt.Sprintf("pc-%d", i)
		// Each kubeconfig differs, as a tenant's would: a comment is enough.
		testkit.MustCreate(t, kube, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name},
			Data:       map[string][]byte{"kubeconfig": append([]byte(fmt.Sprintf("# %d\n", i)), kubeconfig...)},
		})
		testkit.MustCreate(t, kube, &v1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name},
			Spec: v1alpha1.ProviderConfigSpec{Credentials: v1alpha1.ProviderCredentials{
				Source:    xpv2.CredentialsSourceSecret,
				SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: "tenant", Name: name}, Key: "kubeconfig"},
			}},
		})
		mr := &v1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: name}}
		mr.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ProviderConfigKind, Name: name}
		testkit.MustCreate(t, kube, mr)
		// The usage tracker names the resource by its kind in an owner
		// reference; a typed create leaves it empty.
		mr.SetGroupVersionKind(v1alpha1.OverridePolicyGroupVersionKind)
		mrs[i] = mr
	}
	for i, mr := range mrs {
		h, err := hosts.connect(ctx, mr)
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		// The client works: it reaches the host.
		var ns corev1.Namespace
		if err := h.client.Get(ctx, client.ObjectKey{Name: "tenant"}, &ns); err != nil {
			t.Fatalf("host client of %s: %v", mr.Name, err)
		}
		if n := hosts.clients.len(); n > bound {
			t.Fatalf("after %d provider configs the provider holds %d host clients, bound %d", i+1, n, bound)
		}
	}

	// A changed kubeconfig replaces the config's client.
	last := mrs[configs-1]
	before := hosts.clients.len()
	var s corev1.Secret
	testkit.MustUpdate(t, kube, client.ObjectKey{Namespace: "tenant", Name: last.Name}, &s, func() {
		s.Data["kubeconfig"] = append([]byte("# rotated\n"), s.Data["kubeconfig"]...)
	})
	if _, err := hosts.connect(ctx, last); err != nil {
		t.Fatal(err)
	}
	if n := hosts.clients.len(); n != before {
		t.Errorf("a rotated kubeconfig left %d host clients, want %d (the old one replaced)", n, before)
	}

	// A deleted config's client goes when its reconciler sees it gone.
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: last.Name}}
	if err := kube.Delete(ctx, pc); err != nil {
		t.Fatal(err)
	}
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	r := forgetHosts(kube, hosts, v1alpha1.ProviderConfigKind, noop)
	testkit.Eventually(t, 30*time.Second, "deleted ProviderConfig's client forgotten", func() (bool, string) {
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pc)}); err != nil {
			return false, err.Error()
		}
		_, held := hosts.clients.lru.Get(providerConfigKey{Kind: v1alpha1.ProviderConfigKind, Namespace: "tenant", Name: last.Name})
		return !held, fmt.Sprintf("%d clients held", hosts.clients.len())
	})
}
