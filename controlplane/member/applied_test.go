package member

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// TestAppliedObjectKeepsTheFieldSetDigest: the watch's copy carries the
// digest of each applied field set, the same digest render computes from
// the full object (whatever the key order), cutting it down again (an
// informer may transform an object it holds) keeps that digest, and the
// rest of the object (its status) is kept as served.
func TestAppliedObjectKeepsTheFieldSetDigest(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{
		{Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}},"f:metadata":{"f:labels":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
	}
	full := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"status":   map[string]any{"readyReplicas": int64(2)}}}
	full.SetManagedFields(managed)
	want := render.AppliedFieldsDigest([]metav1.ManagedFieldsEntry{{Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}},"f:spec":{"f:replicas":{}}}`)}}, "flotilla")
	if want == "" {
		t.Fatal("no digest of flotilla's field set")
	}
	once, err := appliedObject(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	twice, err := appliedObject(once.(*unstructured.Unstructured).DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	for name, obj := range map[string]any{"once": once, "twice": twice} {
		u := obj.(*unstructured.Unstructured)
		m := appliedMetadata(u)
		if len(m.ManagedFields) != 1 {
			t.Fatalf("%s: managed fields %+v, want flotilla's apply entry only", name, m.ManagedFields)
		}
		e := render.AppliedEntry(m.ManagedFields, "flotilla")
		if e == nil || e.FieldsV1.GetRawString() != fieldsDigestPrefix+want+`"` {
			t.Errorf("%s: flotilla's entry %+v, want the digest %s", name, e, want)
		}
		if ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); ready != 2 {
			t.Errorf("%s: status %v, want it kept", name, u.Object["status"])
		}
	}
	if d := render.AppliedFieldsDigest(managed, "kube-controller-manager"); d != "" {
		t.Errorf("an update entry has an applied digest %q", d)
	}
}
