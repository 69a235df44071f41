package controllertest

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// WidgetGVK is the cluster-scoped custom kind WidgetCRD defines.
var WidgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// WidgetCRD is a cluster-scoped custom kind, example.com/v1 Widget.
func WidgetCRD(t testing.TB) *apiextensionsv1.CustomResourceDefinition {
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

// Widget is the Widget name with spec.size.
func Widget(name, size string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": size}}}
	u.SetGroupVersionKind(WidgetGVK)
	u.SetName(name)
	return u
}

// Namespaces creates the namespaces on the host.
func Namespaces(t testing.TB, hub client.Client, names ...string) {
	t.Helper()
	for _, ns := range names {
		testkit.MustCreate(t, hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
}

// WaitObject waits until the cluster-scoped object exists in a member.
func WaitObject(t testing.TB, c client.Client, cluster string, obj client.Object, name string) {
	t.Helper()
	testkit.Eventually(t, Deadline, fmt.Sprintf("%T %s in %s", obj, name, cluster), func() (bool, string) {
		err := c.Get(t.Context(), client.ObjectKey{Name: name}, obj)
		return err == nil, fmt.Sprint(err)
	})
}

// WaitGone waits until the cluster-scoped object no longer exists.
func WaitGone(t testing.TB, c client.Client, obj client.Object, name string) {
	t.Helper()
	testkit.Eventually(t, Deadline, fmt.Sprintf("%T %s gone", obj, name), func() (bool, string) {
		err := c.Get(t.Context(), client.ObjectKey{Name: name}, obj)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// AbsentFor checks, for d, that a member has no such object: what a
// refused binding or Work must never make appear.
func AbsentFor(t testing.TB, c client.Client, obj client.Object, key client.ObjectKey, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		err := c.Get(t.Context(), key, obj)
		if err == nil {
			t.Fatalf("%T %s appeared in a member", obj, key)
		}
		if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}
