package work_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/hoststore"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestNamespacedOverwriteIsIgnored: a tenant's namespaced policy asking for
// conflictResolution Overwrite does not adopt an object someone else put in
// the member (the binding and the Work say Abort, the object is left as
// it is); an administrator's ClusterPropagationPolicy does, and deleting
// the template then releases the adopted object instead of deleting it.
// Templates in a namespace the operator reserved are never bound.
func TestNamespacedOverwriteIsIgnored(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 3)
	env.StartControlPlane(t, func(o *shared.Options) {
		o.ReservedNamespaces = []string{"kube-*", shared.SystemNamespace, "istio-system"}
	})
	hub, names := env.Hub, env.Names
	ctx := t.Context()
	member := env.Members[names[0]]
	cmKey := client.ObjectKey{Namespace: "default", Name: "shared"}
	testkit.MustCreate(t, member, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shared"}, Data: map[string]string{"owner": "someone else"}})

	pp := &policyv1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "adopt"}}
	testkit.MustYAML(t, pp, `
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: shared}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
  conflictResolution: Overwrite
`, names[0])
	testkit.MustCreate(t, hub, pp)
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shared"}, Data: map[string]string{"owner": "flotilla"}})
	workKey := client.ObjectKey{Namespace: shared.ExecutionNamespace(names[0]), Name: shared.WorkName(api.TemplateRef{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: "shared"})}
	rbKey := client.ObjectKey{Namespace: "default", Name: hoststore.BindingName(schema.GroupKind{Kind: "ConfigMap"}, "shared")}
	testkit.Eventually(t, controllertest.Deadline, "namespaced Overwrite counts as Abort", func() (bool, string) {
		var w workv1.Work
		if err := hub.Get(ctx, workKey, &w); err != nil {
			return false, err.Error()
		}
		var rb workv1.ResourceBinding
		if err := hub.Get(ctx, rbKey, &rb); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(w.Status.Conditions, api.ConditionWorkApplied)
		ok := c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "is not managed by flotilla") &&
			w.Annotations[shared.AnnotationConflictResolution] == "Abort" && rb.Spec.ConflictResolution == api.ConflictAbort
		return ok, fmt.Sprintf("work conditions %+v annotations %v; binding conflictResolution %q", w.Status.Conditions, w.Annotations, rb.Spec.ConflictResolution)
	})
	var cm corev1.ConfigMap
	if err := member.Get(ctx, cmKey, &cm); err != nil || cm.Data["owner"] != "someone else" || cm.Labels[render.LabelFleet] != "" {
		t.Fatalf("member object after a namespaced Overwrite: %v data %v labels %v, want it untouched", err, cm.Data, cm.Labels)
	}

	t.Log("an administrator's ClusterPropagationPolicy may overwrite")
	if err := hub.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	cpp := &policyv1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "adopt"}}
	testkit.MustYAML(t, cpp, `
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: shared}, {apiVersion: v1, kind: ConfigMap, name: mesh}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
  conflictResolution: Overwrite
`, names[0])
	testkit.MustCreate(t, hub, cpp)
	testkit.Eventually(t, controllertest.Deadline, "adopted by the cluster policy", func() (bool, string) {
		if err := member.Get(ctx, cmKey, &cm); err != nil {
			return false, err.Error()
		}
		return cm.Data["owner"] == "flotilla" && cm.Labels[render.LabelFleet] == "test" && cm.Annotations[execution.AnnotationAdopted] == "true",
			fmt.Sprintf("data %v labels %v annotations %v", cm.Data, cm.Labels, cm.Annotations)
	})

	t.Log("deleting the template releases the adopted object")
	if err := hub.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, controllertest.Deadline, "work and binding gone", func() (bool, string) {
		werr := hub.Get(ctx, workKey, &workv1.Work{})
		rerr := hub.Get(ctx, rbKey, &workv1.ResourceBinding{})
		return apierrors.IsNotFound(werr) && apierrors.IsNotFound(rerr), fmt.Sprintf("work: %v, binding: %v", werr, rerr)
	})
	if err := member.Get(ctx, cmKey, &cm); err != nil {
		t.Fatalf("adopted object was deleted, want it released: %v", err)
	}
	if _, owned := cm.Labels[render.LabelFleet]; owned || cm.Annotations[execution.AnnotationAdopted] != "" {
		t.Errorf("released object = labels %v annotations %v, want no ownership left", cm.Labels, cm.Annotations)
	}

	t.Log("a reserved namespace's templates are never bound")
	testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "istio-system"}})
	testkit.MustCreate(t, hub, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "istio-system", Name: "mesh"}})
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		var list workv1.ResourceBindingList
		if err := hub.List(ctx, &list, client.InNamespace("istio-system")); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			t.Fatalf("binding %s made in reserved namespace istio-system", list.Items[0].Name)
		}
	}
}
