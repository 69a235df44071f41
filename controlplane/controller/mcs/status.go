package mcs

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeConditions sets conds on the ServiceExport tmpl's status.conditions
// (the MCS API's Valid and Conflict), keeping each one's
// lastTransitionTime while its status holds and any condition of another
// type as it is. An unchanged status writes nothing. The status is merged
// in as a patch of the conditions alone: no other writer of a
// ServiceExport's status is overwritten, and a stale cached template does
// not make the write conflict.
func (r *reconciler) writeConditions(ctx context.Context, tmpl *unstructured.Unstructured, conds []metav1.Condition) error {
	raw, _, _ := unstructured.NestedSlice(tmpl.Object, "status", "conditions")
	var current []metav1.Condition
	for _, item := range raw {
		m, ok := item.(map[string]any)
		var c metav1.Condition
		if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) != nil {
			continue // not a condition: replaced by the ones below
		}
		current = append(current, c)
	}
	next := make([]metav1.Condition, len(current))
	copy(next, current)
	for _, c := range conds {
		apimeta.SetStatusCondition(&next, c)
	}
	if len(next) == len(raw) && equality.Semantic.DeepEqual(current, next) {
		return nil
	}
	items := make([]any, 0, len(next))
	for i := range next {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&next[i])
		if err != nil {
			return fmt.Errorf("encode condition %s of ServiceExport %s/%s: %w", next[i].Type, tmpl.GetNamespace(), tmpl.GetName(), err)
		}
		items = append(items, m)
	}
	patched := tmpl.DeepCopy()
	if err := unstructured.SetNestedSlice(patched.Object, items, "status", "conditions"); err != nil {
		return fmt.Errorf("set conditions of ServiceExport %s/%s: %w", tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(tmpl)); err != nil {
		return fmt.Errorf("write status of ServiceExport %s/%s: %w", tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	return nil
}
