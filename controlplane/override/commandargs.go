package override

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Container fields the command and args overriders change.
const (
	fieldCommand = "command"
	fieldArgs    = "args"
)

// applyCommandArgs appends to (add) or deletes from (remove) the command or
// args list of the named container of a well-known workload kind. A
// container that is not there, or a kind flotilla does not know, is left
// alone, as in Karmada.
func applyCommandArgs(obj map[string]any, kind schema.GroupKind, field string, o api.CommandArgsOverrider) (map[string]any, error) {
	if o.Operator != api.OverriderOpAdd && o.Operator != api.OverriderOpRemove {
		return nil, fmt.Errorf("unknown operator %q (want add or remove)", o.Operator)
	}
	var ops []operation
	for _, c := range podContainers(obj, kind) {
		if name, _ := c.fields["name"].(string); name != o.ContainerName {
			continue
		}
		path := c.pointer + "/" + field
		current, present := c.fields[field]
		if !present || current == nil {
			// Karmada writes an empty list when removing from a missing
			// list; flotilla leaves the field out, which means the same to
			// the kubelet and keeps the rendered object minimal.
			if o.Operator == api.OverriderOpRemove || len(o.Value) == 0 {
				continue
			}
			ops = append(ops, operation{Op: string(api.OverriderOpAdd), Path: path, Value: stringsValue(o.Value)})
			continue
		}
		items, err := stringList(current)
		if err != nil {
			return nil, &pathError{path: path, err: err}
		}
		var next []string
		if o.Operator == api.OverriderOpAdd {
			next = append(items, o.Value...)
		} else {
			next = removeAll(items, o.Value)
		}
		ops = append(ops, operation{Op: string(api.OverriderOpReplace), Path: path, Value: stringsValue(next)})
	}
	out, err := patchObject(obj, ops)
	if err != nil {
		return nil, fmt.Errorf("patch container %s: %w", field, err)
	}
	return out, nil
}

// stringList reads a command or args list; every item must be a string.
func stringList(v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("holds %s, not a list of strings", jsonKind(v))
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("item %d holds %s, not a string", i, jsonKind(item))
		}
		out = append(out, s)
	}
	return out, nil
}

// removeAll deletes every occurrence of each value, keeping the order of the
// rest.
func removeAll(items, values []string) []string {
	drop := make(map[string]bool, len(values))
	for _, v := range values {
		drop[v] = true
	}
	out := make([]string, 0, len(items))
	for _, item := range items {
		if !drop[item] {
			out = append(out, item)
		}
	}
	return out
}

func stringsValue(items []string) json.RawMessage {
	if items == nil {
		items = []string{}
	}
	b, _ := json.Marshal(items) // strings always marshal
	return b
}
