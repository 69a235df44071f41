package e2e_test

import (
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

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
	t.Parallel()
	env := controllertest.StartRunning(t, 3)
	hub, members, names := env.Hub, env.Members, env.Names
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
	testkit.MustCreate(t, hub, controllertest.WidgetCRD(t))
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla:reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
	testkit.MustCreate(t, hub, role)
	// The host serves Widgets once the CRD is established.
	testkit.Eventually(t, controllertest.Deadline, "host serves widgets", func() (bool, string) {
		err := hub.Create(ctx, controllertest.Widget("blue", "large"))
		return err == nil, fmt.Sprint(err)
	})

	for _, n := range names[:2] {
		controllertest.WaitObject(t, members[n], n, &apiextensionsv1.CustomResourceDefinition{}, "widgets.example.com")
		controllertest.WaitObject(t, members[n], n, &rbacv1.ClusterRole{}, "flotilla:reader")
		controllertest.WaitObject(t, members[n], n, controllertest.Widget("", ""), "blue")
	}
	controllertest.AbsentFor(t, members[names[2]], &rbacv1.ClusterRole{}, client.ObjectKey{Name: "flotilla:reader"}, time.Second)

	t.Log("the ClusterRole's ClusterResourceBinding: named as Karmada names it, fully applied, one status item per member")
	roleBinding := client.ObjectKey{Name: "flotilla.reader-clusterrole.rbac.authorization.k8s.io"}
	testkit.Eventually(t, controllertest.Deadline, "ClusterResourceBinding "+roleBinding.Name+" fully applied", func() (bool, string) {
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
	w := controllertest.Widget("", "")
	testkit.MustUpdate(t, hub, client.ObjectKey{Name: "blue"}, w, func() {
		if err := unstructured.SetNestedField(w.Object, "small", "spec", "size"); err != nil {
			t.Fatal(err)
		}
	})
	testkit.Eventually(t, controllertest.Deadline, "widget blue small in "+names[0], func() (bool, string) {
		got := controllertest.Widget("", "")
		if err := members[names[0]].Get(ctx, client.ObjectKey{Name: "blue"}, got); err != nil {
			return false, err.Error()
		}
		size, _, _ := unstructured.NestedString(got.Object, "spec", "size")
		return size == "small", "size " + size
	})

	t.Log("a tenant: a namespaced policy selecting a ClusterRole claims nothing; a ResourceBinding naming one is refused")
	controllertest.Namespaces(t, env.Hub, "tenant-a")
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
	refused := controllertest.WaitRefused(t, hub, client.ObjectKeyFromObject(forged), "ResourceBinding tenant-a/"+forged.Name, "spec.resource.kind", "is cluster-scoped")
	if works := controllertest.WorksOf(t, hub, refused.UID); len(works) != 0 {
		t.Errorf("the forged binding has %d Works, want none", len(works))
	}
	controllertest.AbsentFor(t, members[names[2]], &rbacv1.ClusterRole{}, client.ObjectKey{Name: "flotilla:reader"}, 2*time.Second)

	t.Log("policy change: the first member is pruned")
	testkit.MustUpdate(t, hub, client.ObjectKeyFromObject(cpp), cpp, func() {
		cpp.Spec.Placement.ClusterAffinity.ClusterNames = names[1:2]
	})
	controllertest.WaitGone(t, members[names[0]], &rbacv1.ClusterRole{}, "flotilla:reader")
	controllertest.WaitGone(t, members[names[0]], controllertest.Widget("", ""), "blue")

	t.Log("delete: a template deleted on the host leaves the members, its binding goes")
	if err := hub.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	controllertest.WaitGone(t, members[names[1]], &rbacv1.ClusterRole{}, "flotilla:reader")
	controllertest.WaitGone(t, hub, &workv1.ClusterResourceBinding{}, roleBinding.Name)
	controllertest.WaitObject(t, members[names[1]], names[1], controllertest.Widget("", ""), "blue")
}
