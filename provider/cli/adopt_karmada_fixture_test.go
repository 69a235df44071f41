//go:build linux

package cli

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// writeKarmadaClusterRole writes a cluster-scoped template as Karmada
// leaves it: a ClusterRole claimed by a ClusterPropagationPolicy, its
// ClusterResourceBinding and Works, which carry the
// clusterresourcebinding.karmada.io keys instead of the resourcebinding
// ones, and the ClusterRole applied in both members.
func writeKarmadaClusterRole(t *testing.T, hub client.Client, members []*testenv.Cluster, state adoptState) {
	t.Helper()
	m1, m2 := members[0].Name, members[1].Name
	mustCreateYAML(t, hub, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: rbac
  labels: {%s: 77aa-cpolicy}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: reader}
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
`, api.KarmadaLabelClusterPolicyPermanentID, m1, m2))
	tmpl := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list]}
`
	u := yamlObject(t, tmpl)
	u.SetLabels(map[string]string{api.KarmadaLabelClusterPolicyPermanentID: "77aa-cpolicy"})
	u.SetAnnotations(map[string]string{"clusterpropagationpolicy.karmada.io/name": "rbac"})
	if err := hub.Create(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	state.refs["reader"] = api.TemplateRefOf(u)
	const crbID, crbName, workName = "c0de-reader-binding", "reader-clusterrole", "reader-5f8d7c6b4"
	state.works["reader"] = workName
	mustCreateYAML(t, hub, fmt.Sprintf(`apiVersion: work.karmada.io/v1alpha2
kind: ClusterResourceBinding
metadata:
  name: %[1]s
  labels: {%[2]s: %[3]s, %[4]s: 77aa-cpolicy}
  annotations: {clusterpropagationpolicy.karmada.io/name: rbac}
spec:
  resource: {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: reader, uid: %[5]s, resourceVersion: "%[6]s"}
  clusters: [{name: %[7]s}, {name: %[8]s}]
  placement:
    clusterAffinity: {clusterNames: [%[7]s, %[8]s]}
`, crbName, api.KarmadaLabelClusterBindingPermanentID, crbID, api.KarmadaLabelClusterPolicyPermanentID, u.GetUID(), u.GetResourceVersion(), m1, m2))
	for i, m := range members {
		manifest := yamlObject(t, tmpl)
		workID := fmt.Sprintf("4a2b-reader-%d", i)
		manifest.SetLabels(map[string]string{
			api.KarmadaLabelManaged: api.KarmadaValueManaged, api.KarmadaLabelClusterPolicyPermanentID: "77aa-cpolicy",
			api.KarmadaLabelClusterBindingPermanentID: crbID, api.KarmadaLabelWorkPermanentID: workID,
		})
		manifest.SetAnnotations(map[string]string{
			"clusterpropagationpolicy.karmada.io/name": "rbac", "resourcetemplate.karmada.io/uid": string(u.GetUID()),
			api.KarmadaAnnotationClusterBindingName: crbName,
			api.KarmadaAnnotationWorkName:           workName, api.KarmadaAnnotationWorkNamespace: "karmada-es-" + m.Name,
			api.KarmadaAnnotationConflictResolution: "abort",
		})
		work := karmadaWork(m.Name, workName, manifest,
			map[string]string{api.KarmadaLabelClusterBindingPermanentID: crbID, api.KarmadaLabelWorkPermanentID: workID},
			map[string]string{api.KarmadaAnnotationClusterBindingName: crbName})
		if err := hub.Create(t.Context(), work); err != nil {
			t.Fatal(err)
		}
		if err := plainClient(t, m.RESTConfig()).Create(t.Context(), manifest, client.FieldOwner("karmada-controller-manager")); err != nil {
			t.Fatal(err)
		}
	}
}

func mustCreateYAML(t *testing.T, c client.Client, doc string) {
	t.Helper()
	if err := c.Create(t.Context(), yamlObject(t, doc)); err != nil {
		t.Fatalf("create %s: %v", doc, err)
	}
}

func yamlObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// dumpHost logs the host's bindings and Works, to tell why a test failed.
func dumpHost(t *testing.T, hub client.Client) {
	for _, kind := range []struct{ apiVersion, kind, ns string }{
		{"work.karmada.io/v1alpha2", "ResourceBindingList", "default"},
		{"work.karmada.io/v1alpha1", "WorkList", ""},
	} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(kind.apiVersion)
		list.SetKind(kind.kind)
		if err := hub.List(context.Background(), list, client.InNamespace(kind.ns)); err != nil {
			t.Logf("list %s: %v", kind.kind, err)
			continue
		}
		for _, item := range list.Items {
			status, _, _ := unstructured.NestedFieldNoCopy(item.Object, "status")
			clusters, _, _ := unstructured.NestedFieldNoCopy(item.Object, "spec", "clusters")
			t.Logf("%s %s/%s labels %v clusters %v status %v", item.GetKind(), item.GetNamespace(), item.GetName(), item.GetLabels(), clusters, status)
		}
	}
}

// karmadaWork is a Work as Karmada's binding controller writes it in the
// execution namespace of cluster: manifest as its one workload, Karmada's
// execution finalizer, and the binding's labels and annotations.
func karmadaWork(cluster, name string, manifest *unstructured.Unstructured, labels, annotations map[string]string) *unstructured.Unstructured {
	work := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
		"spec": map[string]any{"workload": map[string]any{"manifests": []any{manifest.DeepCopy().Object}}},
	}}
	work.SetNamespace("karmada-es-" + cluster)
	work.SetName(name)
	work.SetFinalizers([]string{"karmada.io/execution-controller"})
	work.SetLabels(labels)
	work.SetAnnotations(annotations)
	return work
}
