package execution

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ManagedView returns the part of live that flotilla manages: live
// projected onto the fields that fieldManager's Apply entry in
// managedFields owns, together with the fields desired declares (when
// desired is not nil). apiVersion, kind, name and namespace are always
// kept. This is what Terraform Read stores, so drift in those fields shows
// and server defaults (a Deployment's spec.strategy, a pod's dnsPolicy, a
// container's terminationMessagePath) do not.
//
// The declared fields matter because an Update by another manager that
// changes a field flotilla applied (kubectl edit, kubectl scale) moves the
// field's ownership to that manager: projected on flotilla's entry alone,
// the changed field would vanish from the view instead of showing its new
// value.
//
// No OpenAPI schema is needed. The field sets carry the list keys the
// apiserver chose (k:{"name":"web"}, v:"x"), and the projection follows
// them: associative list items are matched by their keys, set items by
// value, and a list without keyed entries is atomic and kept whole. A
// schema deduced from the object itself (typed.DeducedParseableType) would
// treat every list as atomic and let defaulted container fields in.
func ManagedView(live *unstructured.Unstructured, fieldManager string, desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	owned := &fieldpath.Set{}
	hints := &fieldpath.Set{}
	for _, entry := range live.GetManagedFields() {
		if entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
			return nil, fmt.Errorf("decode the managed fields of %q: %w", entry.Manager, err)
		}
		hints = hints.Union(set)
		if entry.Manager == fieldManager && entry.Operation == metav1.ManagedFieldsOperationApply {
			owned = owned.Union(set)
		}
	}
	if desired != nil {
		declared := &fieldpath.Set{}
		declare(desired.Object, nil, hints, declared)
		owned = owned.Union(declared)
	}
	view, _ := project(live.Object, owned).(map[string]any)
	if view == nil {
		view = map[string]any{}
	}
	out := &unstructured.Unstructured{Object: view}
	out.SetAPIVersion(live.GetAPIVersion())
	out.SetKind(live.GetKind())
	out.SetName(live.GetName())
	out.SetNamespace(live.GetNamespace())
	unstructured.RemoveNestedField(out.Object, "metadata", "managedFields")
	return out, nil
}

// project returns the part of v that s selects, nil when nothing is
// selected. A member without children is kept whole: an atomic list or
// map, or a scalar.
func project(v any, s *fieldpath.Set) any {
	switch v := v.(type) {
	case map[string]any:
		return projectMap(v, s)
	case []any:
		return projectList(v, s)
	default:
		return v
	}
}

func projectMap(m map[string]any, s *fieldpath.Set) any {
	out := map[string]any{}
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		if pe.FieldName == nil {
			return
		}
		if val, ok := m[*pe.FieldName]; ok {
			out[*pe.FieldName] = runtime.DeepCopyJSONValue(val)
		}
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if pe.FieldName == nil {
			return
		}
		val, ok := m[*pe.FieldName]
		if !ok {
			return
		}
		child, _ := s.Children.Get(pe)
		// A member that also has children ("." in FieldsV1) is owned as a
		// whole only for its existence: keep just the selected children.
		if p := project(val, child); p != nil {
			out[*pe.FieldName] = p
		} else if s.Members.Has(pe) {
			out[*pe.FieldName] = emptyLike(val)
		} else {
			delete(out, *pe.FieldName)
		}
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

func projectList(l []any, s *fieldpath.Set) any {
	var out []any
	for i, item := range l {
		if pe, ok := matchItem(s.Children.Iterate, i, item); ok {
			child, _ := s.Children.Get(pe)
			if p := project(item, child); p != nil {
				out = append(out, p)
				continue
			}
		}
		if _, ok := matchItem(s.Members.Iterate, i, item); ok {
			out = append(out, runtime.DeepCopyJSONValue(item))
		}
	}
	if out == nil {
		return nil
	}
	return out
}

// matchItem finds the path element among those iterate yields that selects
// the list item at index i.
func matchItem(iterate func(func(fieldpath.PathElement)), i int, item any) (fieldpath.PathElement, bool) {
	var found fieldpath.PathElement
	ok := false
	iterate(func(pe fieldpath.PathElement) {
		if ok {
			return
		}
		switch {
		case pe.Key != nil:
			m, isMap := item.(map[string]any)
			ok = isMap && keyMatches(*pe.Key, m, false)
		case pe.Value != nil:
			ok = value.Equals(*pe.Value, value.NewValueInterface(item))
		case pe.Index != nil:
			ok = *pe.Index == i
		}
		if ok {
			found = pe
		}
	})
	return found, ok
}

// keyMatches reports whether item has every key field with its value. With
// loose, a key field the item lacks is allowed: the apiserver defaults some
// key fields (a container port's protocol) before recording them, so a
// declared item may lack one that its recorded key has.
func keyMatches(key value.FieldList, item map[string]any, loose bool) bool {
	present := 0
	for _, f := range key {
		v, ok := item[f.Name]
		if !ok {
			if loose {
				continue
			}
			return false
		}
		if !value.Equals(f.Value, value.NewValueInterface(v)) {
			return false
		}
		present++
	}
	return present > 0
}

func emptyLike(v any) any {
	switch v.(type) {
	case map[string]any:
		return map[string]any{}
	case []any:
		return []any{}
	default:
		return v
	}
}

// declare adds to out the fields that v (part of a desired object, at
// path) declares, using hints (every manager's field sets) to name the
// items of associative lists and sets as the apiserver does.
func declare(v any, path fieldpath.Path, hints *fieldpath.Set, out *fieldpath.Set) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			out.Insert(path)
			return
		}
		for k, child := range v {
			declare(child, slices.Concat(path, fieldpath.Path{fieldpath.FieldNameElement(k)}), hints, out)
		}
	case []any:
		declareList(v, path, hints, out)
	default:
		out.Insert(path)
	}
}

func declareList(l []any, path fieldpath.Path, hints *fieldpath.Set, out *fieldpath.Set) {
	at := hints
	for _, pe := range path {
		at = at.WithPrefix(pe)
	}
	var keys []fieldpath.PathElement
	isSet := false
	collect := func(pe fieldpath.PathElement) {
		switch {
		case pe.Key != nil:
			keys = append(keys, pe)
		case pe.Value != nil:
			isSet = true
		}
	}
	at.Members.Iterate(collect)
	at.Children.Iterate(collect)
	switch {
	case len(keys) > 0:
		for _, item := range l {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			if pe, ok := itemKey(keys, m); ok {
				declare(m, slices.Concat(path, fieldpath.Path{pe}), hints, out)
			}
		}
	case isSet:
		for _, item := range l {
			out.Insert(slices.Concat(path, fieldpath.Path{fieldpath.ValueElement(value.NewValueInterface(item))}))
		}
	default:
		out.Insert(path)
	}
}

// itemKey finds the recorded key of a declared list item: an exact match
// first, else one whose missing fields the apiserver defaulted.
func itemKey(keys []fieldpath.PathElement, item map[string]any) (fieldpath.PathElement, bool) {
	for _, loose := range []bool{false, true} {
		for _, pe := range keys {
			if keyMatches(*pe.Key, item, loose) {
				return pe, true
			}
		}
	}
	return fieldpath.PathElement{}, false
}
