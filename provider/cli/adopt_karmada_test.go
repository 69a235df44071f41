//go:build linux

package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestAdoptKarmada takes over a host in the state Karmada's controllers
// leave it: its CRDs (not labelled as flotilla's), Clusters with their
// Secrets, three templates (two Deployments and a ConfigMap) claimed by
// policy.karmada.io PropagationPolicies, their work.karmada.io/v1alpha2
// ResourceBindings and their Works in karmada-es-<cluster>, all with
// Karmada's labels and annotations, and the member objects Karmada applied
// from those Works; a ClusterRole claimed by a ClusterPropagationPolicy,
// with its ClusterResourceBinding and Works; and a pull-mode Cluster. One member object differs from its Work (the
// ConfigMap's data edited in member2). One binding (Deployment api,
// divided by static weights 1:2) holds Karmada's older 2:1 division.
//
// adopt-karmada refuses while Karmada's scheduler holds its lease; its dry
// run lists each object with its verdict, the mismatch with its reason,
// the api binding as a WARN naming both placements (flotilla's plan of it
// would be a rollout) and its objects as SKIP, and writes nothing; the real run labels the CRDs and writes the record. The
// control plane in Karmada's groups then starts and applies every Work it
// renders, and the members see no write and no deletion at all: a watch
// opened on each member before the adoption sees no event, and every
// resourceVersion is unchanged. The mismatched object and the api
// Deployments (conflicts, not taken over) are left as they are.
// A template change afterwards reaches both members.
func TestAdoptKarmada(t *testing.T) {
	start := time.Now()
	bin := buildBinary(t)
	hostEnv := testenv.Start(t, testenv.Options{Clusters: 1, Mode: testenv.APIServerOnly, NamePrefix: "host"})
	// Members without controllers: nothing but flotilla could write there.
	membersEnv := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	host, members := hostEnv.Clusters[0], membersEnv.Clusters
	hub := plainClient(t, host.RESTConfig())
	m1, m2 := members[0].Name, members[1].Name
	memberClients := map[string]client.Client{}
	for _, m := range members {
		memberClients[m.Name] = plainClient(t, m.RESTConfig())
	}
	t.Logf("fleet up in %v", time.Since(start).Round(10*time.Millisecond))

	installKarmadaCRDs(t, hub)
	t.Cleanup(func() {
		if t.Failed() {
			dumpHost(t, hub)
		}
	})
	state := writeKarmadaState(t, hub, members)
	t.Logf("karmada state written at %v", time.Since(start).Round(10*time.Millisecond))

	// Karmada's scheduler still runs: nothing is adopted.
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: "karmada-scheduler"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("karmada-scheduler-7d9f_1"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-system"}})
	testkit.MustCreate(t, hub, lease)
	out, code := runAdopt(t, bin, host.KubeconfigPath, "--dry-run=false")
	if code != 1 || !strings.Contains(out, "BLOCKED  Lease karmada-system/karmada-scheduler: Karmada's karmada-scheduler still runs") {
		t.Fatalf("adopt-karmada with a live Karmada scheduler lease: exit %d, output:\n%s\nwant exit 1 and the lease named", code, out)
	}
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(lease), lease, func() {
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-time.Minute)}
	})

	// From here on, any write to a member object shows on these watches.
	events := watchMembers(t, members)
	before := memberVersions(t, memberClients)

	out, code = runAdopt(t, bin, host.KubeconfigPath)
	for _, want := range []string{
		fmt.Sprintf("ADOPT    Cluster %s: credentials readable, member reachable", m1),
		fmt.Sprintf("ADOPT    ResourceBinding default/web-deployment: Deployment default/web in cluster %s: matches Work karmada-es-%s/%s; taken over without a write", m1, m1, state.works["web"]),
		fmt.Sprintf("ADOPT    ResourceBinding default/web-deployment: Deployment default/web in cluster %s: matches Work karmada-es-%s/%s", m2, m2, state.works["web"]),
		fmt.Sprintf("ADOPT    ResourceBinding default/settings-configmap: ConfigMap default/settings in cluster %s: matches", m1),
		fmt.Sprintf("ADOPT    ClusterResourceBinding reader-clusterrole: ClusterRole reader in cluster %s: matches Work karmada-es-%s/%s; taken over without a write", m1, m1, state.works["reader"]),
		fmt.Sprintf("ADOPT    ClusterResourceBinding reader-clusterrole: ClusterRole reader in cluster %s: matches Work karmada-es-%s/%s", m2, m2, state.works["reader"]),
		fmt.Sprintf("SKIP     ResourceBinding default/api-deployment: Deployment default/api in cluster %s: flotilla would place the binding differently from Karmada", m1),
		fmt.Sprintf("WARN     ResourceBinding default/api-deployment: flotilla would place %[1]s=1,%[2]s=2; Karmada placed %[1]s=2,%[2]s=1 (a rollout after the take-over)", m1, m2),
		"SKIP     Cluster edge: pull mode (spec.syncMode Pull): Karmada's karmada-agent in the member applies its Works and keeps its objects",
		fmt.Sprintf("SKIP     ResourceBinding default/settings-configmap: ConfigMap default/settings in cluster %s: the member object differs from Work karmada-es-%s/%s at data.mode (Work blue, member green); it is left alone", m2, m2, state.works["settings"]),
		"LABEL    CustomResourceDefinition resourcebindings.work.karmada.io: installed by Karmada",
		fmt.Sprintf("LABEL    Namespace karmada-es-%s: Karmada's execution namespace of cluster %s", m2, m2),
		"dry run: nothing was written",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("dry run: exit %d, output:\n%s\nwant a line with %q", code, out, want)
		}
	}
	assertNotAdopted(t, hub)

	out, code = runAdopt(t, bin, host.KubeconfigPath, "--dry-run=false")
	if code != 0 || !strings.Contains(out, "adopted: 5 member object(s)") {
		t.Fatalf("adopt-karmada --dry-run=false: exit %d, output:\n%s", code, out)
	}
	adopted := time.Now()

	cp := startControlplaneWith(t, bin, host.KubeconfigPath, "karmada", "--api-groups=karmada")
	cp.waitEndpoint(t, "/readyz")
	// Every Work flotilla renders is applied (or, for the mismatch,
	// refused as a conflict) before anything is counted.
	for _, w := range []struct {
		cluster, template string
		applied           bool
	}{{m1, "web", true}, {m2, "web", true}, {m1, "settings", true}, {m2, "settings", false}, {m1, "reader", true}, {m2, "reader", true},
		// Not taken over: flotilla's 1:2 would be a rollout, so both
		// Karmada objects are left alone as conflicts.
		{m1, "api", false}, {m2, "api", false}} {
		waitFor(t, "flotilla's Work of "+w.template+" in "+w.cluster, func() (bool, string) {
			want := metav1.ConditionFalse
			if w.applied {
				want = metav1.ConditionTrue
			}
			cond, reason := workApplied(t, hub, w.cluster, state.refs[w.template])
			return cond == want, string(cond) + ": " + reason
		})
	}
	t.Logf("control plane applied every Work %v after the adoption", time.Since(adopted).Round(10*time.Millisecond))
	// One more resync of every Work (they are applied again at each).
	time.Sleep(3 * time.Second)
	if got := events.list(); len(got) > 0 {
		t.Fatalf("the members saw %d write(s) or deletion(s) after the take-over, want none:\n%s", len(got), strings.Join(got, "\n"))
	}
	if after := memberVersions(t, memberClients); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("member resourceVersions moved: before %v, after %v", before, after)
	}

	// A template change propagates, and the object becomes flotilla's.
	var web appsv1.Deployment
	testkit.MustUpdate(t, hub, client.ObjectKey{Namespace: "default", Name: "web"}, &web, func() {
		web.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2.0"
	})
	for _, m := range members {
		waitFor(t, "web:2.0 on "+m.Name, func() (bool, string) {
			var d appsv1.Deployment
			if err := memberClients[m.Name].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "web"}, &d); err != nil {
				return false, err.Error()
			}
			img := d.Spec.Template.Spec.Containers[0].Image
			return img == "registry.example/web:2.0" && d.Labels["app.kubernetes.io/managed-by"] == "flotilla", img + " " + fmt.Sprint(d.Labels)
		})
	}
	var cm corev1.ConfigMap
	if err := memberClients[m2].Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil || cm.Data["mode"] != "green" || cm.ResourceVersion != before[m2+"/ConfigMap/settings"] {
		t.Fatalf("the mismatched ConfigMap in %s was not left alone: %v, data %v, resourceVersion %s (was %s)", m2, err, cm.Data, cm.ResourceVersion, before[m2+"/ConfigMap/settings"])
	}
	t.Logf("total %v", time.Since(start).Round(10*time.Millisecond))
}

// runAdopt runs the binary's adopt-karmada over kubeconfig and returns its
// output and exit code.
func runAdopt(t *testing.T, bin, kubeconfig string, extra ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"adopt-karmada", "--kubeconfig", kubeconfig}, extra...)...)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// installKarmadaCRDs installs the CRDs of Karmada's groups as Karmada's
// installer leaves them: without flotilla's installed-by label.
func installKarmadaCRDs(t *testing.T, hub client.Client) {
	t.Helper()
	// The test runs alone (not parallel), so the process' groups can be
	// switched for the definitions and back.
	prev := apis.Current()
	apis.Use(apis.KarmadaGroups)
	defs, err := crd.Definitions()
	apis.Use(prev)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		labels := d.GetLabels()
		delete(labels, crd.LabelInstalledBy)
		d.SetLabels(labels)
	}
	if err := crd.Apply(t.Context(), hub, defs, "karmada-operator", time.Minute); err != nil {
		t.Fatal(err)
	}
}

// assertNotAdopted fails when the host holds anything a real run writes.
func assertNotAdopted(t *testing.T, hub client.Client) {
	t.Helper()
	var d apiextensionsv1.CustomResourceDefinition
	if err := hub.Get(t.Context(), client.ObjectKey{Name: "resourcebindings.work.karmada.io"}, &d); err != nil || d.Labels[crd.LabelInstalledBy] != "" {
		t.Fatalf("the dry run labelled the CRDs: %v %v", err, d.Labels)
	}
	err := hub.Get(t.Context(), client.ObjectKey{Namespace: shared.SystemNamespace, Name: shared.KarmadaAdoptionConfigMap}, &corev1.ConfigMap{})
	if !shared.IsNotFound(err) {
		t.Fatalf("the dry run wrote the adoption record: %v", err)
	}
}

// workApplied is the Applied condition of flotilla's Work of ref in cluster.
func workApplied(t *testing.T, hub client.Client, cluster string, ref api.TemplateRef) (metav1.ConditionStatus, string) {
	t.Helper()
	w := &unstructured.Unstructured{}
	w.SetAPIVersion("work.karmada.io/v1alpha1")
	w.SetKind("Work")
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: "karmada-es-" + cluster, Name: shared.WorkName(ref)}, w); err != nil {
		return "", err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == api.ConditionWorkApplied {
			return metav1.ConditionStatus(fmt.Sprint(m["status"])), fmt.Sprint(m["message"])
		}
	}
	return "", "no Applied condition"
}

// memberVersions are the resourceVersions of the templates' objects in the
// members, by cluster/Kind/name.
func memberVersions(t *testing.T, clients map[string]client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, c := range clients {
		for _, o := range []struct {
			kind string
			key  client.ObjectKey
			obj  client.Object
		}{
			{"Deployment", client.ObjectKey{Namespace: "default", Name: "web"}, &appsv1.Deployment{}},
			{"Deployment", client.ObjectKey{Namespace: "default", Name: "api"}, &appsv1.Deployment{}},
			{"ConfigMap", client.ObjectKey{Namespace: "default", Name: "settings"}, &corev1.ConfigMap{}},
			{"ClusterRole", client.ObjectKey{Name: "reader"}, &rbacv1.ClusterRole{}},
		} {
			if err := c.Get(t.Context(), o.key, o.obj); err != nil {
				t.Fatal(err)
			}
			out[name+"/"+o.kind+"/"+o.key.Name] = o.obj.GetResourceVersion()
		}
	}
	return out
}

// memberEvents collects every watch event on the members' objects.
type memberEvents struct {
	mu     sync.Mutex
	events []string
}

func (e *memberEvents) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

// watchMembers watches Deployments and ConfigMaps in default, and
// ClusterRoles, of every
// member from now on; the watches end with the test.
func watchMembers(t *testing.T, members []*testenv.Cluster) *memberEvents {
	t.Helper()
	e := &memberEvents{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, m := range members {
		dyn, err := dynamic.NewForConfig(m.RESTConfig())
		if err != nil {
			t.Fatal(err)
		}
		for _, gvr := range []schema.GroupVersionResource{{Group: "apps", Version: "v1", Resource: "deployments"}, {Version: "v1", Resource: "configmaps"}, {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}} {
			ns := "default"
			if gvr.Resource == "clusterroles" {
				ns = ""
			}
			list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			if err != nil {
				t.Fatal(err)
			}
			go func(cluster string) {
				for ev := range w.ResultChan() {
					if ev.Type == watch.Bookmark {
						continue
					}
					name := ""
					if u, ok := ev.Object.(*unstructured.Unstructured); ok {
						name = u.GetKind() + " " + u.GetName() + " rv " + u.GetResourceVersion()
					}
					e.mu.Lock()
					e.events = append(e.events, fmt.Sprintf("%s: %s %s", cluster, ev.Type, name))
					e.mu.Unlock()
				}
			}(m.Name)
		}
	}
	return e
}

// adoptState names what writeKarmadaState wrote.
type adoptState struct {
	// works are Karmada's Work names, by template name.
	works map[string]string
	// refs are the templates, by name.
	refs map[string]api.TemplateRef
}

// writeKarmadaState writes the host and the members as Karmada's
// controllers leave them, with Karmada's labels and annotations
// (pkg/apis/work/v1alpha2 and pkg/controllers/ctrlutil of karmada-io/karmada).
// The credentials Secrets are in karmada-cluster, where Karmada keeps them
// and the control plane reads them in Karmada mode.
func writeKarmadaState(t *testing.T, hub client.Client, members []*testenv.Cluster) adoptState {
	t.Helper()
	secrets := apis.KarmadaGroups.CredentialsNamespace()
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared.SystemNamespace}})
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secrets}})
	var docs strings.Builder
	for _, m := range members {
		testkit.MustCreate(t, hub, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secrets, Name: m.Name}, Data: controllertest.TokenData(m)})
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-es-" + m.Name}})
		fmt.Fprintf(&docs, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: %s}
spec:
  apiEndpoint: %s
  syncMode: Push
  secretRef: {namespace: %s, name: %s}
`, m.Name, m.Host, secrets, m.Name)
	}
	m1, m2 := members[0].Name, members[1].Name
	fmt.Fprintf(&docs, `---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: app
  namespace: default
  labels: {propagationpolicy.karmada.io/permanent-id: 5d1c0c55-policy}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: v1, kind: ConfigMap, name: settings}
  placement:
    clusterAffinity: {clusterNames: [%[1]s, %[2]s]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: split
  namespace: default
  labels: {propagationpolicy.karmada.io/permanent-id: 6e2d1d66-split}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: api}
  placement:
    clusterAffinity: {clusterNames: [%[1]s, %[2]s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%[1]s]}, weight: 1}
        - {targetCluster: {clusterNames: [%[2]s]}, weight: 2}
`, m1, m2)
	templates := map[string]string{
		// Divided by the split policy's weights, 1:2, which were
		// edited while Karmada's scheduler was stopped: Karmada's
		// binding still says 2:1, so flotilla would place it otherwise.
		"api": `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default, labels: {app: api}}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "registry.example/api:1.0"}]
`,
		"web": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.example/web:1.0"}]
`,
		"settings": `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {mode: blue}
`,
	}
	for _, doc := range strings.Split(docs.String(), "\n---\n") {
		mustCreateYAML(t, hub, doc)
	}
	state := adoptState{works: map[string]string{}, refs: map[string]api.TemplateRef{}}
	for name, tmpl := range templates {
		policyName, policyID := "app", "5d1c0c55-policy"
		// Karmada's replicas per cluster: all of them in each (Duplicated),
		// or the api's old 2:1 division.
		perCluster := func(i int, replicas int64) int64 { return replicas }
		if name == "api" {
			policyName, policyID = "split", "6e2d1d66-split"
			perCluster = func(i int, _ int64) int64 { return int64(2 - i) }
		}
		u := yamlObject(t, tmpl)
		u.SetLabels(merge(u.GetLabels(), map[string]string{api.KarmadaLabelPolicyPermanentID: policyID}))
		u.SetAnnotations(map[string]string{"propagationpolicy.karmada.io/name": policyName, "propagationpolicy.karmada.io/namespace": "default"})
		if err := hub.Create(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		ref := api.TemplateRefOf(u)
		state.refs[name] = ref
		rbID, rbName := "9f3e-"+name+"-binding", name+"-"+strings.ToLower(u.GetKind())
		// Karmada's Work name is the template's name and a hash.
		workName := name + "-7c6b9d8f5"
		state.works[name] = workName
		replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		rb := yamlObject(t, fmt.Sprintf(`apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: %[1]s
  namespace: default
  labels: {%[2]s: %[3]s, %[4]s: %[13]s}
  annotations: {propagationpolicy.karmada.io/name: %[14]s, propagationpolicy.karmada.io/namespace: default}
spec:
  resource: {apiVersion: %[5]s, kind: %[6]s, namespace: default, name: %[7]s, uid: %[8]s, resourceVersion: "%[9]s"}
  replicas: %[10]d
  clusters: [{name: %[11]s, replicas: %[15]d}, {name: %[12]s, replicas: %[16]d}]
  placement:
    clusterAffinity: {clusterNames: [%[11]s, %[12]s]}
`, rbName, api.KarmadaLabelBindingPermanentID, rbID, api.KarmadaLabelPolicyPermanentID, u.GetAPIVersion(), u.GetKind(), name, u.GetUID(), u.GetResourceVersion(), replicas, m1, m2,
			policyID, policyName, perCluster(0, replicas), perCluster(1, replicas)))
		if err := hub.Create(t.Context(), rb); err != nil {
			t.Fatal(err)
		}
		for i, m := range members {
			// The manifest Karmada's binding controller writes and its
			// execution controller applies: the template with Karmada's
			// marks (ctrlutil.CreateOrUpdateWork).
			manifest := yamlObject(t, tmpl)
			if replicas > 0 {
				// Karmada's replica revision of the Work.
				_ = unstructured.SetNestedField(manifest.Object, perCluster(i, replicas), "spec", "replicas")
			}
			workID := fmt.Sprintf("4a2b-%s-%d", name, i)
			manifest.SetLabels(merge(manifest.GetLabels(), map[string]string{
				api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelPolicyPermanentID: policyID,
				api.KarmadaLabelBindingPermanentID: rbID, api.KarmadaLabelWorkPermanentID: workID,
			}))
			manifest.SetAnnotations(map[string]string{
				"propagationpolicy.karmada.io/name": policyName, "propagationpolicy.karmada.io/namespace": "default",
				"resourcetemplate.karmada.io/uid": string(u.GetUID()),
				api.KarmadaAnnotationBindingName:  rbName, api.KarmadaAnnotationBindingNamespace: "default",
				api.KarmadaAnnotationWorkName: workName, api.KarmadaAnnotationWorkNamespace: "karmada-es-" + m.Name,
				api.KarmadaAnnotationConflictResolution: "abort",
			})
			work := karmadaWork(m.Name, workName, manifest,
				map[string]string{api.KarmadaLabelBindingPermanentID: rbID, api.KarmadaLabelWorkPermanentID: workID},
				map[string]string{api.KarmadaAnnotationBindingName: rbName, api.KarmadaAnnotationBindingNamespace: "default"})
			if err := hub.Create(t.Context(), work); err != nil {
				t.Fatal(err)
			}
			if name == "settings" && m.Name == m2 {
				// Edited by hand in the member since Karmada applied it.
				_ = unstructured.SetNestedField(manifest.Object, "green", "data", "mode")
			}
			mc := plainClient(t, m.RESTConfig())
			if err := mc.Create(t.Context(), manifest, client.FieldOwner("karmada-controller-manager")); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeKarmadaClusterRole(t, hub, members, state)
	// A pull-mode Cluster: its karmada-agent keeps its objects; listed as
	// SKIP, never surveyed.
	mustCreateYAML(t, hub, `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: edge}
spec: {syncMode: Pull}
`)
	return state
}
