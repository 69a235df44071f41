package member

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// TestAppliedMetadataKeepsTheFieldSetDigest: the cut-down copy carries the
// digest of each applied field set, the same digest render computes from
// the full object (whatever the key order), and cutting it down again (an
// informer may transform an object it holds) keeps that digest.
func TestAppliedMetadataKeepsTheFieldSetDigest(t *testing.T) {
	full := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}},"f:metadata":{"f:labels":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)},
	}}}
	want := render.AppliedFieldsDigest([]metav1.ManagedFieldsEntry{{Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{}},"f:spec":{"f:replicas":{}}}`)}}, "flotilla")
	if want == "" {
		t.Fatal("no digest of flotilla's field set")
	}
	once, err := appliedMetadata(full)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := appliedMetadata(once)
	if err != nil {
		t.Fatal(err)
	}
	for name, obj := range map[string]any{"once": once, "twice": twice} {
		m := obj.(*metav1.PartialObjectMetadata)
		if len(m.ManagedFields) != 1 {
			t.Fatalf("%s: managed fields %+v, want flotilla's apply entry only", name, m.ManagedFields)
		}
		e := render.AppliedEntry(m.ManagedFields, "flotilla")
		if e == nil || e.FieldsV1.GetRawString() != fieldsDigestPrefix+want {
			t.Errorf("%s: flotilla's entry %+v, want the digest %s", name, e, want)
		}
	}
	if d := render.AppliedFieldsDigest(full.ManagedFields, "kube-controller-manager"); d != "" {
		t.Errorf("an update entry has an applied digest %q", d)
	}
}
