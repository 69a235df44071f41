package controller_test

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// widgetCRD is a cluster-scoped custom kind, example.com/v1 Widget.
func widgetCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	testkit.MustYAML(t, crd, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`)
	return crd
}

func widget(name, size string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": size}}}
	u.SetGroupVersionKind(widgetGVK)
	u.SetName(name)
	return u
}

// TestClusterScopedTemplates runs the control plane against a real host and
// three real members. After it has started, a cluster-scoped CRD, an
// instance of it and a ClusterRole are created on the host and claimed by a
// ClusterPropagationPolicy: the control plane learns the new kind from
// discovery without a restart, writes one ClusterResourceBinding per
// template and Works in the execution namespaces, the three objects reach
// the two chosen members (and not the third), the bindings aggregate the
// members' status, a policy change prunes a member and a template deleted
// on the host leaves the members. A tenant's namespaced policy never claims
// a cluster-scoped object, and a ResourceBinding naming one is refused.
func TestClusterScopedTemplates(t *testing.T) {
	env := startControlPlane(t)
	hub, members, names := env.hub, env.members, env.names
	ctx := t.Context()

	t.Log("after start: a ClusterPropagationPolicy, a cluster-scoped CRD, its instance and a ClusterRole")
	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    name: widgets.example.com
  - apiVersion: example.com/v1
    kind: Widget
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    name: "flotilla:reader"
  placement:
    clusterAffinity:
      clusterNames: [%s, %s]
`, names[0], names[1])
	testkit.MustCreate(t, hub, cpp)
	testkit.MustCreate(t, hub, widgetCRD(t))
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla:reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
	testkit.MustCreate(t, hub, role)
	// The host serves Widgets once the CRD is established.
	testkit.Eventually(t, deadline, "host serves widgets", func() (bool, string) {
		err := hub.Create(ctx, widget("blue", "large"))
		return err == nil, fmt.Sprint(err)
	})

	for _, n := range names[:2] {
		waitObject(t, members[n], n, &apiextensionsv1.CustomResourceDefinition{}, "widgets.example.com")
		waitObject(t, members[n], n, &rbacv1.ClusterRole{}, "flotilla:reader")
		waitObject(t, members[n], n, widget("", ""), "blue")
	}
	absentFor(t, members[names[2]], &rbacv1.ClusterRole{}, client.ObjectKey{Name: "flotilla:reader"}, time.Second)

	t.Log("the ClusterRole's ClusterResourceBinding: named as Karmada names it, fully applied, one status item per member")
	roleBinding := client.ObjectKey{Name: "flotilla.reader-clusterrole.rbac.authorization.k8s.io"}
	testkit.Eventually(t, deadline, "ClusterResourceBinding "+roleBinding.Name+" fully applied", func() (bool, string) {
		var crb workv1.ClusterResourceBinding
		if err := hub.Get(ctx, roleBinding, &crb); err != nil {
			return false, err.Error()
		}
		ok := apimeta.IsStatusConditionTrue(crb.Status.Conditions, api.ConditionFullyApplied) && len(crb.Status.AggregatedStatus) == 2 &&
			crb.Spec.Resource.Namespace == "" && crb.Labels[hoststore.LabelPolicy] == api.KindClusterPropagationPolicy+".platform"
		return ok, fmt.Sprintf("labels %v, resource %+v, status %+v", crb.Labels, crb.Spec.Resource, crb.Status)
	})
	var rbs workv1.ResourceBindingList
	if err := hub.List(ctx, &rbs); err != nil {
		t.Fatal(err)
	}
	if len(rbs.Items) != 0 {
		t.Errorf("cluster-scoped templates got %d ResourceBindings, want none: %+v", len(rbs.Items), rbs.Items)
	}

	t.Log("a template change reaches the members")
	w := widget("", "")
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: "blue"}, w, func() {
		if err := unstructured.SetNestedField(w.Object, "small", "spec", "size"); err != nil {
			t.Fatal(err)
		}
	})
	testkit.Eventually(t, deadline, "widget blue small in "+names[0], func() (bool, string) {
		got := widget("", "")
		if err := members[names[0]].Get(ctx, client.ObjectKey{Name: "blue"}, got); err != nil {
			return false, err.Error()
		}
		size, _, _ := unstructured.NestedString(got.Object, "spec", "size")
		return size == "small", "size " + size
	})

	t.Log("a tenant: a namespaced policy selecting a ClusterRole claims nothing; a ResourceBinding naming one is refused")
	env.namespaces(t, "tenant-a")
	tenantPP := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "grab"}}
	testkit.MustYAML(t, tenantPP, `
spec:
  resourceSelectors:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
  placement:
    clusterAffinity:
      clusterNames: [%s]
`, names[2])
	testkit.MustCreate(t, hub, tenantPP)
	forged := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "flotilla.reader-clusterrole.rbac.authorization.k8s.io"}}
	forged.Spec.Resource = api.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "tenant-a", Name: "flotilla:reader"}
	forged.Spec.Placement = &api.Placement{ClusterAffinity: &api.ClusterAffinity{ClusterNames: []string{names[2]}}}
	forged.Spec.Clusters = []api.TargetCluster{{Name: names[2]}}
	testkit.MustCreate(t, hub, forged)
	refused := waitRefused(t, hub, client.ObjectKeyFromObject(forged), "ResourceBinding tenant-a/"+forged.Name, "spec.resource.kind", "is cluster-scoped")
	if works := worksOf(t, hub, refused.UID); len(works) != 0 {
		t.Errorf("the forged binding has %d Works, want none", len(works))
	}
	absentFor(t, members[names[2]], &rbacv1.ClusterRole{}, client.ObjectKey{Name: "flotilla:reader"}, 2*time.Second)

	t.Log("policy change: the first member is pruned")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(cpp), cpp, func() {
		cpp.Spec.Placement.ClusterAffinity.ClusterNames = names[1:2]
	})
	waitGone(t, members[names[0]], &rbacv1.ClusterRole{}, "flotilla:reader")
	waitGone(t, members[names[0]], widget("", ""), "blue")

	t.Log("delete: a template deleted on the host leaves the members, its binding goes")
	if err := hub.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	waitGone(t, members[names[1]], &rbacv1.ClusterRole{}, "flotilla:reader")
	waitGone(t, hub, &workv1.ClusterResourceBinding{}, roleBinding.Name)
	waitObject(t, members[names[1]], names[1], widget("", ""), "blue")
}

// waitObject waits until the cluster-scoped object exists in a member.
func waitObject(t *testing.T, c client.Client, cluster string, obj client.Object, name string) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%T %s in %s", obj, name, cluster), func() (bool, string) {
		err := c.Get(t.Context(), client.ObjectKey{Name: name}, obj)
		return err == nil, fmt.Sprint(err)
	})
}

// waitGone waits until the cluster-scoped object no longer exists.
func waitGone(t *testing.T, c client.Client, obj client.Object, name string) {
	t.Helper()
	testkit.Eventually(t, deadline, fmt.Sprintf("%T %s gone", obj, name), func() (bool, string) {
		err := c.Get(t.Context(), client.ObjectKey{Name: name}, obj)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
