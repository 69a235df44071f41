package execution

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// RetainedFieldManager is the field manager that holds the fields flotilla
// hands over to a member (interpret.Retain) at the moment it stops applying
// them. Kubernetes' server-side apply removes a field that its only owner
// stops applying (spec.replicas would go back to its default of 1), so
// ownership moves to this manager first, as the Kubernetes documentation
// recommends when handing replicas to an HPA. After that, whoever scales
// the workload (an HPA, kubectl scale) owns the field, and flotilla never
// writes it again while the workload keeps the retain-replicas label.
const RetainedFieldManager = "flotilla-retained"

// retain returns the object to apply to a member where live exists: obj
// without the fields the member owns. A field flotilla's manager still owns
// in live is first handed over to RetainedFieldManager with its live value,
// so leaving it out changes nothing in the member; handedOver reports that
// this happened (live is then out of date).
func (c *clusterRun) retain(ctx context.Context, client dynamic.ResourceInterface, in *interpret.Interpreter, obj, live *unstructured.Unstructured) (_ *unstructured.Unstructured, handedOver bool, _ error) {
	out := obj.DeepCopy()
	paths, err := in.Retain(out, live)
	if err != nil {
		return nil, false, err
	}
	if len(paths) == 0 {
		return obj, false, nil
	}
	owned, err := appliedFields(live, c.e.fieldManager())
	if err != nil {
		return nil, false, err
	}
	handover := &unstructured.Unstructured{Object: map[string]any{}}
	handover.SetAPIVersion(live.GetAPIVersion())
	handover.SetKind(live.GetKind())
	handover.SetName(live.GetName())
	handover.SetNamespace(live.GetNamespace())
	n := 0
	for _, p := range paths {
		elems := make([]any, len(p))
		for i, s := range p {
			elems[i] = s
		}
		if !ownsAt(owned, fieldpath.MakePathOrDie(elems...)) {
			continue
		}
		v, found, err := unstructured.NestedFieldCopy(live.Object, p...)
		if err != nil || !found {
			continue
		}
		if err := unstructured.SetNestedField(handover.Object, v, p...); err != nil {
			return nil, false, fmt.Errorf("hand %v over to the member: %w", p, err)
		}
		n++
	}
	if n > 0 {
		if _, err := client.Apply(ctx, live.GetName(), handover, metav1.ApplyOptions{FieldManager: RetainedFieldManager, Force: true}); err != nil {
			return nil, false, fmt.Errorf("hand the retained fields over to the member: %w", err)
		}
	}
	return out, n > 0, nil
}

// handoverPending reports whether applied, the object an apply left in a
// member, still has a field in flotilla's manager that the member is to
// keep (the first apply that carries the retain-replicas label: retention
// reads the label on the live object, so it takes effect at the next
// pass). That pass must read and hand over, so the apply is not recorded
// as one a resync may skip. A failed check says yes: a read costs less
// than a field never handed over.
func (c *clusterRun) handoverPending(in *interpret.Interpreter, obj, applied *unstructured.Unstructured) bool {
	paths, err := in.Retain(obj.DeepCopy(), applied)
	if err != nil {
		return true
	}
	if len(paths) == 0 {
		return false
	}
	owned, err := appliedFields(applied, c.e.fieldManager())
	if err != nil {
		return true
	}
	for _, p := range paths {
		elems := make([]any, len(p))
		for i, s := range p {
			elems[i] = s
		}
		if ownsAt(owned, fieldpath.MakePathOrDie(elems...)) {
			return true
		}
	}
	return false
}

// ownsAt reports whether owned has path itself or a field under it. An
// object such as a ConfigMap's data is recorded by its fields, not as a
// node of its own, and handing over only exact matches would leave those
// fields to be deleted by the apply that stops carrying them.
func ownsAt(owned *fieldpath.Set, path fieldpath.Path) bool {
	if owned.Has(path) {
		return true
	}
	found := false
	owned.Iterate(func(p fieldpath.Path) {
		found = found || (len(p) > len(path) && p[:len(path)].Equals(path))
	})
	return found
}

// appliedFields is the set of fields manager's Apply entry owns in live.
func appliedFields(live *unstructured.Unstructured, manager string) (*fieldpath.Set, error) {
	owned := &fieldpath.Set{}
	for _, entry := range live.GetManagedFields() {
		if entry.Manager != manager || entry.Operation != metav1.ManagedFieldsOperationApply || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("decode the managed fields of %q: %w", entry.Manager, err)
		}
		owned = owned.Union(set)
	}
	return owned, nil
}

// AsDeclared returns managed (a ManagedView of live) with the fields the
// member owns by interpret.Retain set to their values in desired, the
// object flotilla applies: what a Terraform refresh records, so that an HPA
// scaling a workload with the retain-replicas label is not drift, while
// every other field still shows its live value. managed is returned as it
// is when nothing is retained.
func AsDeclared(desired, managed, live *unstructured.Unstructured) *unstructured.Unstructured {
	if desired == nil || managed == nil || live == nil {
		return managed
	}
	paths := interpret.Retain(desired.DeepCopy(), live)
	if len(paths) == 0 {
		return managed
	}
	out := managed.DeepCopy()
	for _, p := range paths {
		v, found, err := unstructured.NestedFieldCopy(desired.Object, p...)
		if err != nil || !found {
			unstructured.RemoveNestedField(out.Object, p...)
			continue
		}
		// Cannot fail: p exists in desired, so its parents are maps.
		_ = unstructured.SetNestedField(out.Object, v, p...)
	}
	return out
}
