//go:build linux

package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/fleetview"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestFleetViewKarmadaGroups runs the controlplane command in-process in
// Karmada's groups (as --api-groups=karmada chooses them) with the cluster
// proxy behind a real aggregating host and the validating webhook called
// by that host, over two real members whose Clusters are
// cluster.karmada.io objects with their credentials and impersonator
// Secrets in karmada-cluster, written as Karmada's users write them.
//
// Through the proxy (clusterproxy.flotilla.io in either mode) alice, who
// may read pods in the member, lists them as herself; bob, allowed the
// proxy on the host but nothing in the member, gets the member's
// Forbidden naming him. A search.karmada.io ResourceRegistry caches
// ConfigMaps and a list across both members answers, each object
// annotated with its cluster both as flotilla marks it and as
// karmada-search does (resource.karmada.io/cached-from-cluster). The host
// calls the webhook for policy.karmada.io: an invalid PropagationPolicy is
// refused naming the field.
//
// The attack: a Cluster whose spec.impersonatorSecretRef names
// flotilla-system, a namespace the Karmada-mode control plane never reads,
// is refused by the webhook naming the field, the cluster and
// karmada-cluster (it was accepted, and the proxy then answered 503 for
// it).
func TestFleetViewKarmadaGroups(t *testing.T) {
	begin := time.Now()
	// As the command does before it builds a scheme; no test of this
	// package runs in parallel, and the others expect flotilla's groups.
	apis.Use(apis.KarmadaGroups)
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
	env := testenv.Start(t, testenv.Options{Clusters: 3, Mode: testenv.APIServerOnly, Aggregation: true})
	host, members := env.Clusters[0], env.Clusters[1:]
	hub := controllertest.SystemHost(t, host) // Karmada's CRDs, and karmada-cluster
	if ns := shared.CredentialsNamespace(); ns != "karmada-cluster" {
		t.Fatalf("credentials namespace in Karmada mode is %q", ns)
	}
	hostCS := host.Clientset(t)
	ctx := t.Context()

	var docs strings.Builder
	for _, m := range members {
		cs := m.Clientset(t)
		token := impersonatorToken(t, cs)
		testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: m.Name}, Data: controllertest.TokenData(m)})
		testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: m.Name + "-impersonator"},
			Data: map[string][]byte{"token": []byte(token)}})
		fmt.Fprintf(&docs, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: %[1]s
spec:
  apiEndpoint: %[2]s
  syncMode: Push
  secretRef: {namespace: karmada-cluster, name: %[1]s}
  impersonatorSecretRef: {namespace: karmada-cluster, name: %[1]s-impersonator}
`, m.Name, m.Host)
		// alice may read pods and ConfigMaps in default; bob nothing.
		mustCreate(t, func() error {
			_, err := cs.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"}, Rules: memberReaderRules}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{})
			return err
		})
		mustCreate(t, func() error {
			_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-" + m.Name, Labels: map[string]string{"app": "web"}}}, metav1.CreateOptions{})
			return err
		})
	}
	fmt.Fprintf(&docs, `---
apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata:
  name: configmaps
spec:
  targetCluster:
    clusterNames: [%s, %s]
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
`, members[0].Name, members[1].Name)
	createDocs(t, hub, docs.String())
	// alice and bob may use the proxy of every Cluster; the search cache
	// is for whoever may use it and list ConfigMaps on the host.
	grantFleetViewers(t, hostCS, rbacv1.PolicyRule{APIGroups: []string{fleetview.Group}, Resources: []string{"clusters/proxy"}, Verbs: []string{"get", "list", "watch"}})
	certPEM, serving := proxyServing(t)
	// The proxy's Service is in the control plane's own namespace, in
	// either mode.
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.SystemNamespace}})
	ln := registerProxy(t, host, certPEM)
	port := testkit.FreePort(t)
	opts := controllertest.Options("test")
	opts.ClusterProxy = fleetview.Options{Listener: ln.listener, Certificate: serving, RequestTimeout: 5 * time.Second}
	runInProcess(t, controlplaneConfig{
		kubeconfig: host.KubeconfigPath, fleet: "test", metricsAddr: "0", probeAddr: "0", inProcess: true, options: opts,
		webhook: webhookConfig{url: fmt.Sprintf("https://127.0.0.1:%d", port), bindAddress: fmt.Sprintf("127.0.0.1:%d", port), failurePolicy: "Fail",
			client: webhookClientAuth{enabled: true, caFile: host.WebhookClientCAFile, names: []string{testenv.WebhookClientName}}},
	})
	t.Logf("fleet up and control plane started in %v", time.Since(begin).Round(10*time.Millisecond))

	// The proxy, as alice (allowed) and bob (the member refuses him).
	n1, n2 := members[0].Name, members[1].Name
	configMaps := proxyPath(n1, "/api/v1/namespaces/default/configmaps")
	testkit.Eventually(t, time.Minute, "alice lists member1's ConfigMaps through the proxy", func() (bool, string) {
		out, err := kubectl(host, "alice", "get", "--raw", configMaps)
		return err == nil && strings.Contains(out, `"app-`+n1+`"`), out
	})
	if out, err := kubectl(host, "bob", "get", "--raw", configMaps); err == nil || !strings.Contains(out, `User "bob" cannot list resource "configmaps"`) {
		t.Fatalf("bob through the proxy: want the member's Forbidden for user bob, got err=%v:\n%s", err, out)
	}

	// The search cache, filled by a search.karmada.io ResourceRegistry.
	search := fleetview.SearchPrefix + "/api/v1/namespaces/default/configmaps?labelSelector=app%3Dweb"
	testkit.Eventually(t, time.Minute, "both members' ConfigMaps listed from the search cache", func() (bool, string) {
		out, err := kubectl(host, "", "get", "--raw", search)
		if err != nil {
			return false, out
		}
		var list unstructured.UnstructuredList
		if err := list.UnmarshalJSON([]byte(out)); err != nil {
			return false, err.Error()
		}
		var got []string
		for _, o := range list.Items {
			a := o.GetAnnotations()
			got = append(got, o.GetName()+"@"+a[fleetview.ClusterAnnotation]+"/"+a["resource.karmada.io/cached-from-cluster"])
		}
		slices.Sort(got)
		want := []string{"app-" + n1 + "@" + n1 + "/" + n1, "app-" + n2 + "@" + n2 + "/" + n2}
		return slices.Equal(got, want), fmt.Sprintf("got %v, want %v", got, want)
	})

	// The webhook, for Karmada's policy group.
	invalid := &unstructured.Unstructured{}
	mustYAMLObject(t, invalid, `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [a]}
          weight: 0
`)
	testkit.Eventually(t, time.Minute, "the webhook refuses an invalid policy.karmada.io PropagationPolicy naming the field", func() (bool, string) {
		err := hub.Create(ctx, invalid.DeepCopy())
		msg := errString(err)
		return strings.Contains(msg, "denied the request") &&
			strings.Contains(msg, "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight"), msg
	})

	// The attack: an impersonator Secret outside karmada-cluster.
	elsewhere := &unstructured.Unstructured{}
	mustYAMLObject(t, elsewhere, fmt.Sprintf(`
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: elsewhere}
spec:
  apiEndpoint: %s
  syncMode: Push
  secretRef: {namespace: karmada-cluster, name: %s}
  impersonatorSecretRef: {namespace: flotilla-system, name: %s-impersonator}
`, members[0].Host, n1, n1))
	err := hub.Create(ctx, elsewhere)
	for _, want := range []string{"denied the request", "elsewhere", "spec.impersonatorSecretRef.namespace", `"flotilla-system"`, "karmada-cluster"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a Cluster whose impersonator Secret is in flotilla-system: %v; want a refusal naming %s", err, want)
		}
	}
	t.Logf("whole test %v", time.Since(begin).Round(10*time.Millisecond))
}

// createDocs creates every object of the multi-document YAML docs on the
// host, as unstructured objects (so the kinds' groups are those written).
func createDocs(t *testing.T, c client.Client, docs string) {
	t.Helper()
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		mustYAMLObject(t, u, doc)
		if len(u.Object) == 0 {
			continue
		}
		testkit.MustCreate(t, c, u)
	}
}

// mustYAMLObject reads one YAML document into u.
func mustYAMLObject(t *testing.T, u *unstructured.Unstructured, doc string) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
}
