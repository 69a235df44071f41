package webhook_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/webhook"
)

const controlPlaneUser = "system:serviceaccount:flotilla-system:flotilla"

func renderedWork(name string) *workv1.Work {
	w := &workv1.Work{ObjectMeta: metav1.ObjectMeta{
		Namespace:   shared.ExecutionNamespace("east"),
		Name:        name,
		Labels:      map[string]string{shared.LabelBindingPermanentID: "uid"},
		Annotations: map[string]string{shared.AnnotationBindingNamespace: "shop", shared.AnnotationBindingName: "web-configmap"},
	}}
	w.Spec.Workload.Manifests = []api.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"shop","name":"web"}}`)}}}
	return w
}

// TestWebhookGuardsWorksAndBindings: only the control plane's own user may
// write Works, and only well-formed ones; a ResourceBinding naming another
// namespace's object or a kind that is not a template kind is refused with
// the field at fault, on create and on an update of its spec.
func TestWebhookGuardsWorksAndBindings(t *testing.T) {
	hub, host := startHostWith(t, webhook.Options{ControlPlaneUsers: []string{controlPlaneUser}})
	ctx := t.Context()
	for _, ns := range []string{shared.ExecutionNamespace("east"), "tenant-a"} {
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	// The control plane's user gets every right RBAC can give, so only
	// the webhook stands in its way.
	if err := hub.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "flotilla"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: controlPlaneUser}},
	}); err != nil {
		t.Fatal(err)
	}
	cfg := host.RESTConfig()
	cfg.Impersonate.UserName = controlPlaneUser
	cp, err := client.New(cfg, client.Options{Scheme: hub.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	t.Log("Works: anyone but the control plane is refused, even system:masters")
	err = hub.Create(ctx, renderedWork("forged"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "works are written only by the flotilla control plane") || !strings.Contains(err.Error(), controlPlaneUser) {
		t.Fatalf("admin creating a Work: %v, want Forbidden naming the control plane's user", err)
	}
	w := renderedWork("web-1")
	if err := cp.Create(ctx, w); err != nil {
		t.Fatalf("control plane creating a rendered Work: %v", err)
	}
	w.Spec.Workload.Manifests[0].Raw = []byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"kube-system","name":"x"}}`)
	if err := hub.Update(ctx, w.DeepCopy()); !apierrors.IsForbidden(err) {
		t.Errorf("admin updating a Work: %v, want Forbidden", err)
	}
	err = cp.Update(ctx, w.DeepCopy())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.workload.manifests[0].metadata.namespace: Invalid value: "kube-system"`) {
		t.Errorf("control plane writing a Work with another namespace's object: %v, want Invalid", err)
	}
	t.Log("Works: an update of the finalizers alone (a Pull cluster's agent letting its Work go) is left to RBAC")
	var fresh workv1.Work
	if err := hub.Get(ctx, client.ObjectKeyFromObject(w), &fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Finalizers = append(fresh.Finalizers, "example.com/agent")
	if err := hub.Update(ctx, &fresh); err != nil {
		t.Errorf("admin changing only a Work's finalizers: %v, want it allowed", err)
	}
	fresh.Annotations["example.com/forged"] = "x"
	if err := hub.Update(ctx, &fresh); !apierrors.IsForbidden(err) {
		t.Errorf("admin changing a Work's annotations: %v, want Forbidden", err)
	}

	t.Log("ResourceBindings: another namespace's object, a cluster-scoped kind")
	rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "member1-secret"}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "flotilla-system", Name: "member1"}
	rb.Spec.Clusters = []api.TargetCluster{{Name: "evil"}}
	err = hub.Create(ctx, rb)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.resource.namespace: Forbidden: must be the binding's own namespace "tenant-a"`) {
		t.Fatalf("cross-namespace binding: %v, want Invalid naming spec.resource.namespace", err)
	}
	rb = &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "admin-clusterrole.rbac.authorization.k8s.io"}}
	rb.Spec.Resource = api.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Namespace: "tenant-a", Name: "admin"}
	rb.Spec.Placement = &api.Placement{}
	if err := hub.Create(ctx, rb); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resource.kind: Forbidden: rbac.authorization.k8s.io/v1 ClusterRole is cluster-scoped") {
		t.Fatalf("binding of a ClusterRole: %v, want Invalid naming spec.resource.kind", err)
	}

	t.Log("ClusterResourceBindings: a namespaced kind, a namespace's template, a reserved Namespace; a ClusterRole's passes")
	crb := &workv1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-configmap"}}
	crb.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "web"}
	crb.Spec.Placement = &api.Placement{}
	if err := hub.Create(ctx, crb); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resource.kind: Forbidden: v1 ConfigMap is namespaced") {
		t.Fatalf("cluster binding of a ConfigMap: %v, want Invalid naming spec.resource.kind", err)
	}
	crb.Spec.Resource.Namespace = "tenant-a"
	if err := hub.Create(ctx, crb); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resource.namespace: Forbidden: must be empty") {
		t.Fatalf("cluster binding of a namespace's template: %v, want Invalid naming spec.resource.namespace", err)
	}
	crb = &workv1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "kube-system-namespace"}}
	crb.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "kube-system"}
	crb.Spec.Placement = &api.Placement{}
	if err := hub.Create(ctx, crb); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resource.name: Forbidden: namespace kube-system is reserved") {
		t.Fatalf("cluster binding of kube-system: %v, want Invalid naming spec.resource.name", err)
	}
	crb = &workv1.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "system.view-clusterrole.rbac.authorization.k8s.io"}}
	crb.Spec.Resource = api.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "system:view"}
	crb.Spec.Placement = &api.Placement{}
	if err := hub.Create(ctx, crb); err != nil {
		t.Fatalf("cluster binding of a ClusterRole: %v", err)
	}
	good := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "web-configmap"}}
	good.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "tenant-a", Name: "web"}
	good.Spec.Placement = &api.Placement{}
	if err := hub.Create(ctx, good); err != nil {
		t.Fatalf("valid binding: %v", err)
	}
	good.Spec.Resource.Namespace = "tenant-b"
	if err := hub.Update(ctx, good); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.resource.namespace") {
		t.Errorf("update to another namespace's template: %v, want Invalid", err)
	}
}
