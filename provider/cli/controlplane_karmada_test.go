//go:build linux

package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestControlplaneKarmadaGroups runs the real binary with
// --api-groups=karmada (and the chart's --propagate-secrets=false) over a
// host and three real members, and applies Karmada-shaped YAML unchanged:
// Clusters with their Secrets in karmada-cluster, where Karmada keeps them,
// a PropagationPolicy dividing a Deployment 1:3 by static weights, an
// OverridePolicy changing its image in one member, and a
// ClusterPropagationPolicy sending a ConfigMap of a new namespace to all
// three. The members receive their share, the override lands in one member
// only, the binding is work.karmada.io/v1alpha2, the Works live in
// karmada-es-<cluster>, the members' status is aggregated onto the
// template, a new host namespace reaches every member (namespace sync),
// and when the first member's apiserver stops its replica moves to the
// second (failover).
//
// An attack on the credentials namespace: a Cluster whose secretRef names
// flotilla-system, with valid credentials of a member, is refused
// (CredentialsRefused naming karmada-cluster): Karmada mode moves the one
// namespace whose Secrets the control plane reads, it adds none.
//
// The attack: a second control plane in flotilla's groups runs over the
// same host at the same time. Each family writes only its own objects:
// a policy.flotilla.io policy is bound by the flotilla one alone and a
// policy.karmada.io one by the Karmada one alone, and neither control
// plane takes a policy of either family for a template to propagate.
func TestControlplaneKarmadaGroups(t *testing.T) {
	start := time.Now()
	bin := buildBinary(t)
	t.Logf("binary built in %v", time.Since(start).Round(10*time.Millisecond))
	hostEnv := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "host"})
	membersEnv := testenv.Start(t, testenv.Options{Clusters: 3})
	host, members := hostEnv.Clusters[0], membersEnv.Clusters
	hub := plainClient(t, host.RESTConfig())
	memberClients := map[string]client.Client{}
	for _, m := range members {
		memberClients[m.Name] = plainClient(t, m.RESTConfig())
	}
	t.Logf("fleet up in %v", time.Since(start).Round(10*time.Millisecond))

	karmada := startControlplaneWith(t, bin, host.KubeconfigPath, "karmada", "--api-groups=karmada", "--propagate-secrets=false",
		"--cluster-failure-threshold=1s", "--no-execute-after=2s")
	flotilla := startControlplaneWith(t, bin, host.KubeconfigPath, "flotilla")
	for _, p := range []*controlplaneProcess{karmada, flotilla} {
		p.waitEndpoint(t, "/readyz")
	}

	// The CRDs follow the mode, and the Karmada ones are labelled as
	// flotilla's, so a restart does not take them for Karmada's.
	var rbCRD apiextensionsv1.CustomResourceDefinition
	if err := hub.Get(t.Context(), client.ObjectKey{Name: "resourcebindings.work.karmada.io"}, &rbCRD); err != nil {
		t.Fatalf("karmada mode installed no ResourceBinding CRD: %v", err)
	}
	if v := rbCRD.Spec.Versions; len(v) != 1 || v[0].Name != "v1alpha2" || rbCRD.Labels[crd.LabelInstalledBy] != crd.InstalledByFlotilla {
		t.Fatalf("resourcebindings.work.karmada.io: versions %+v, labels %v; want only v1alpha2, labelled %s", v, rbCRD.Labels, crd.LabelInstalledBy)
	}

	var docs strings.Builder
	for _, ns := range []string{"karmada-cluster", "flotilla-system"} {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flotilla-system", Name: "elsewhere"}, Data: controllertest.TokenData(members[2])})
	fmt.Fprintf(&docs, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: elsewhere
spec:
  apiEndpoint: %s
  syncMode: Push
  secretRef:
    namespace: flotilla-system
    name: elsewhere
`, members[2].Host)
	for _, m := range members {
		testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: m.Name}, Data: controllertest.TokenData(m)})
		fmt.Fprintf(&docs, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata:
  name: %s
spec:
  apiEndpoint: %s
  syncMode: Push
  secretRef:
    namespace: karmada-cluster
    name: %s
`, m.Name, m.Host, m.Name)
	}
	m1, m2, m3 := members[0].Name, members[1].Name, members[2].Name
	fmt.Fprintf(&docs, `---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  - apiVersion: v1
    kind: ConfigMap
    name: only-karmada
  # An attack: the control plane's own kinds, of either family, are never templates.
  - apiVersion: policy.karmada.io/v1alpha1
    kind: PropagationPolicy
  - apiVersion: policy.flotilla.io/v1alpha1
    kind: PropagationPolicy
  placement:
    clusterAffinity:
      clusterNames: [%[1]s, %[2]s]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - targetCluster:
            clusterNames: [%[1]s]
          weight: 1
        - targetCluster:
            clusterNames: [%[2]s]
          weight: 3
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: eu-registry
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  overrideRules:
  - targetCluster:
      clusterNames: [%[2]s]
    overriders:
      imageOverrider:
      - component: Registry
        operator: replace
        value: eu.registry.example
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: flotilla-only
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: only-flotilla
  - apiVersion: policy.karmada.io/v1alpha1
    kind: PropagationPolicy
  placement:
    clusterAffinity:
      clusterNames: [%[1]s]
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-b
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: team-a-shared
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    namespace: team-a
    name: shared
  placement:
    clusterAffinity:
      clusterNames: [%[1]s, %[2]s, %[3]s, elsewhere]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  namespace: team-a
data:
  k: v
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: only-karmada
  namespace: default
data:
  k: v
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: only-flotilla
  namespace: default
data:
  k: v
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 4
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.0
`, m1, m2, m3)
	applied := time.Now()
	for _, doc := range strings.Split(docs.String(), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		waitFor(t, "create "+u.GetKind()+" "+u.GetName(), func() (bool, string) {
			err := hub.Create(t.Context(), u.DeepCopy())
			return err == nil, fmt.Sprint(err)
		})
	}

	want := map[string]struct {
		replicas int32
		image    string
	}{m1: {1, "registry.example/web:1.0"}, m2: {3, "eu.registry.example/web:1.0"}}
	for name, w := range want {
		waitFor(t, "web on "+name, func() (bool, string) {
			var d appsv1.Deployment
			if err := memberClients[name].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				return false, err.Error()
			}
			got := d.Spec.Template.Spec.Containers[0].Image
			return *d.Spec.Replicas == w.replicas && got == w.image, fmt.Sprintf("replicas %d image %s", *d.Spec.Replicas, got)
		})
		waitFor(t, "ConfigMap only-karmada on "+name, func() (bool, string) {
			err := memberClients[name].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "only-karmada"}, &corev1.ConfigMap{})
			return err == nil, fmt.Sprint(err)
		})
	}
	waitFor(t, "the members' status aggregated onto the template", func() (bool, string) {
		var d appsv1.Deployment
		if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return d.Status.ReadyReplicas == 4 && d.Status.Replicas == 4, fmt.Sprintf("status %+v", d.Status)
	})
	t.Logf("Karmada YAML propagated and its status aggregated %v after apply", time.Since(applied).Round(10*time.Millisecond))

	for _, m := range members {
		waitFor(t, "namespace team-b (namespace sync) and ConfigMap team-a/shared (ClusterPropagationPolicy) on "+m.Name, func() (bool, string) {
			c := memberClients[m.Name]
			if err := c.Get(t.Context(), client.ObjectKey{Name: "team-b"}, &corev1.Namespace{}); err != nil {
				return false, err.Error()
			}
			err := c.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "shared"}, &corev1.ConfigMap{})
			return err == nil, fmt.Sprint(err)
		})
	}
	waitFor(t, "Cluster elsewhere (secretRef in flotilla-system) refused", func() (bool, string) {
		reason, msg := clusterReady(t, hub, "elsewhere")
		return reason == "CredentialsRefused" && strings.Contains(msg, `"flotilla-system"`) && strings.Contains(msg, "karmada-cluster"), reason + ": " + msg
	})

	works := listOf(t, hub, "work.karmada.io/v1alpha1", "WorkList", "karmada-es-"+m2)
	if len(works) == 0 {
		t.Errorf("no work.karmada.io Work in karmada-es-%s", m2)
	}
	// The flotilla control plane binds its own policy's template (it has no
	// Clusters, so nothing reaches a member)...
	waitFor(t, "a work.flotilla.io binding for only-flotilla", func() (bool, string) {
		names := bindingTemplates(t, hub, "work.flotilla.io/v1alpha1")
		return names["ConfigMap/only-flotilla"], fmt.Sprint(names)
	})
	// ... and, given a moment more, neither control plane has bound what
	// the other family's policy selects, nor any policy of either family.
	time.Sleep(2 * time.Second)
	for apiVersion, wantNames := range map[string][]string{
		"work.karmada.io/v1alpha2":  {"ConfigMap/only-karmada", "Deployment/web"},
		"work.flotilla.io/v1alpha1": {"ConfigMap/only-flotilla"},
	} {
		got := bindingTemplates(t, hub, apiVersion)
		if len(got) != len(wantNames) {
			t.Errorf("%s ResourceBindings are for %v, want exactly %v", apiVersion, got, wantNames)
		}
		for _, n := range wantNames {
			if !got[n] {
				t.Errorf("%s ResourceBindings are for %v, want exactly %v", apiVersion, got, wantNames)
			}
		}
	}
	for name, c := range memberClients {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "only-flotilla"}, &corev1.ConfigMap{}); err == nil {
			t.Errorf("ConfigMap only-flotilla reached %s: the Karmada control plane acted on a flotilla policy", name)
		}
	}

	failed := time.Now()
	members[0].StopAPIServer()
	waitFor(t, "failover: all 4 replicas of web on "+m2+" once "+m1+" stops", func() (bool, string) {
		var d appsv1.Deployment
		if err := memberClients[m2].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
			return false, err.Error()
		}
		return *d.Spec.Replicas == 4, fmt.Sprintf("replicas %d", *d.Spec.Replicas)
	})
	t.Logf("failover took %v (failure threshold 1s, NoExecute after 2s)", time.Since(failed).Round(10*time.Millisecond))
	if reason, _ := clusterReady(t, hub, m1); reason == "" {
		t.Errorf("cluster %s has no Ready condition after its apiserver stopped", m1)
	}
	t.Logf("whole test %v", time.Since(start).Round(10*time.Millisecond))
}

// clusterReady returns the reason and message of the Ready condition of the
// cluster.karmada.io Cluster name ("" when it has none).
func clusterReady(t *testing.T, c client.Client, name string) (reason, message string) {
	t.Helper()
	cl := &unstructured.Unstructured{}
	cl.SetAPIVersion("cluster.karmada.io/v1alpha1")
	cl.SetKind("Cluster")
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, cl); err != nil {
		t.Fatalf("read cluster %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok && m["type"] == "Ready" {
			return fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
		}
	}
	return "", ""
}

// TestControlplaneKarmadaGroupsRefusal runs the controlplane command
// (in-process: the entry point, flags included) with --api-groups=karmada
// on a host where Karmada's CRDs were installed by Karmada (no flotilla
// label): it exits 1, names the CRD it found, and leaves the host as it was.
func TestControlplaneKarmadaGroupsRefusal(t *testing.T) {
	host := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly}).Clusters[0]
	hub := plainClient(t, host.RESTConfig())
	karmadaCRD := &apiextensionsv1.CustomResourceDefinition{}
	testkit.MustYAML(t, karmadaCRD, `
metadata:
  name: propagationpolicies.policy.karmada.io
  labels: {app.kubernetes.io/managed-by: karmada}
spec:
  group: policy.karmada.io
  names: {kind: PropagationPolicy, listKind: PropagationPolicyList, plural: propagationpolicies, singular: propagationpolicy}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
	testkit.MustCreate(t, hub, karmadaCRD)

	// The command chooses the process' API groups; the other tests of this
	// package expect flotilla's.
	t.Cleanup(func() { apis.Use(apis.FlotillaGroups) })
	out := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Controlplane([]string{"--kubeconfig", host.KubeconfigPath, "--api-groups=karmada", "--leader-elect=false",
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, out)
	}()
	select {
	case code := <-done:
		if code != 1 {
			t.Fatalf("controlplane --api-groups=karmada exited %d on a host whose Karmada CRDs Karmada owns, want 1:\n%s", code, out.String())
		}
	case <-time.After(leaderDeadline):
		t.Fatalf("controlplane --api-groups=karmada kept running on a host whose Karmada CRDs Karmada owns:\n%s", out.String())
	}
	for _, want := range []string{"propagationpolicies.policy.karmada.io", "a Karmada control plane already serves", crd.LabelInstalledBy} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("refusal does not say %q:\n%s", want, out.String())
		}
	}
	var after apiextensionsv1.CustomResourceDefinition
	if err := hub.Get(t.Context(), client.ObjectKey{Name: karmadaCRD.Name}, &after); err != nil {
		t.Fatal(err)
	}
	if after.Labels[crd.LabelInstalledBy] != "" || len(after.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties) != 0 {
		t.Errorf("the refusing control plane changed Karmada's CRD: labels %v", after.Labels)
	}
	if err := hub.Get(t.Context(), client.ObjectKey{Name: "clusters.cluster.karmada.io"}, &apiextensionsv1.CustomResourceDefinition{}); err == nil {
		t.Error("the refusing control plane installed clusters.cluster.karmada.io")
	}
}

// plainClient is a client of cfg for the built-in kinds and CRDs only:
// flotilla's and Karmada's kinds are read as unstructured objects, so the
// test does not depend on which groups this process' scheme has.
func plainClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return controllertest.Client(t, cfg, s)
}

// startControlplaneWith starts the binary's controlplane over kubeconfig
// without leader election (the two families' processes run side by side),
// with extra flags.
func startControlplaneWith(t *testing.T, bin, kubeconfig, name string, extra ...string) *controlplaneProcess {
	t.Helper()
	return startControlplaneProcess(t, bin, name, append([]string{"--kubeconfig", kubeconfig, "--fleet", "test", "--leader-elect=false"}, extra...)...)
}

// listOf lists kind (a List kind) of apiVersion in namespace.
func listOf(t *testing.T, c client.Client, apiVersion, kind, namespace string) []unstructured.Unstructured {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(apiVersion)
	list.SetKind(kind)
	if err := c.List(t.Context(), list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("list %s %s: %v", apiVersion, kind, err)
	}
	return list.Items
}

// bindingTemplates are the Kind/name of the templates of every
// ResourceBinding of apiVersion in default.
func bindingTemplates(t *testing.T, c client.Client, apiVersion string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, rb := range listOf(t, c, apiVersion, "ResourceBindingList", "default") {
		kind, _, _ := unstructured.NestedString(rb.Object, "spec", "resource", "kind")
		name, _, _ := unstructured.NestedString(rb.Object, "spec", "resource", "name")
		out[kind+"/"+name] = true
	}
	return out
}
