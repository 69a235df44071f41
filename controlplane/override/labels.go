package override

import (
	"fmt"
	"sort"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Metadata maps the labels and annotations overriders change.
const (
	fieldLabels      = "labels"
	fieldAnnotations = "annotations"
)

// applyLabelsAnnotations changes metadata.labels or metadata.annotations.
// As in Karmada, add sets every key (creating the map when needed), while
// replace and remove touch only keys that already exist. Keys are applied in
// sorted order so the result never depends on map iteration.
func applyLabelsAnnotations(obj map[string]any, field string, o api.LabelAnnotationOverrider) (map[string]any, error) {
	switch o.Operator {
	case api.OverriderOpAdd, api.OverriderOpReplace, api.OverriderOpRemove:
	default:
		return nil, unsupportedOperator(o.Operator)
	}
	keys := make([]string, 0, len(o.Value))
	for k := range o.Value {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	meta, _ := obj["metadata"].(map[string]any)
	existing, _ := meta[field].(map[string]any)
	var ops []operation
	if o.Operator == api.OverriderOpAdd && existing == nil && len(keys) > 0 {
		if meta == nil {
			ops = append(ops, operation{Op: string(api.OverriderOpAdd), Path: "/metadata", Value: []byte("{}")})
		}
		ops = append(ops, operation{Op: string(api.OverriderOpAdd), Path: "/metadata/" + field, Value: []byte("{}")})
	}
	for _, k := range keys {
		path := "/metadata/" + field + "/" + escapePointerToken(k)
		if _, ok := existing[k]; !ok && o.Operator != api.OverriderOpAdd {
			continue
		}
		op := operation{Op: string(o.Operator), Path: path}
		if o.Operator != api.OverriderOpRemove {
			op.Value = stringValue(o.Value[k])
		}
		ops = append(ops, op)
	}
	out, err := patchObject(obj, ops)
	if err != nil {
		return nil, fmt.Errorf("patch metadata.%s: %w", field, err)
	}
	return out, nil
}
