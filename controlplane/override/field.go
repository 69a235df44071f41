package override

import (
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// applyField patches the JSON or YAML document held in a string field (a
// ConfigMap entry, say): decode, apply the operations with JSON Patch, and
// encode back in the same syntax. YAML comes back with sorted keys and
// without comments, as in Karmada.
func applyField(obj map[string]any, o api.FieldOverrider) (map[string]any, error) {
	if len(o.JSON) > 0 && len(o.YAML) > 0 {
		return nil, &pathError{path: o.FieldPath, err: errors.New("set either json or yaml operations, not both")}
	}
	if len(o.JSON) == 0 && len(o.YAML) == 0 {
		return obj, nil
	}
	text, err := getStringPointer(obj, o.FieldPath)
	if err != nil {
		return nil, &pathError{path: o.FieldPath, err: err}
	}
	var patched []byte
	if len(o.YAML) > 0 {
		patched, err = patchYAML([]byte(text), yamlOperations(o.YAML))
	} else {
		patched, err = patchBytes([]byte(text), jsonOperations(o.JSON))
	}
	if err != nil {
		return nil, &pathError{path: o.FieldPath, err: err}
	}
	out, err := patchObject(obj, []operation{{
		Op:    string(api.OverriderOpReplace),
		Path:  o.FieldPath,
		Value: stringValue(string(patched)),
	}})
	if err != nil {
		return nil, &pathError{path: o.FieldPath, err: err}
	}
	return out, nil
}

// patchYAML converts YAML to JSON, patches it and converts it back.
func patchYAML(doc []byte, ops []operation) ([]byte, error) {
	asJSON, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("decode yaml: %w", err)
	}
	patched, err := patchBytes(asJSON, ops)
	if err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(patched)
	if err != nil {
		return nil, fmt.Errorf("encode yaml: %w", err)
	}
	return out, nil
}

func jsonOperations(in []api.JSONPatchOperation) []operation {
	ops := make([]operation, 0, len(in))
	for _, o := range in {
		ops = append(ops, fieldOperation(o.Operator, o.SubPath, o.Value.Raw))
	}
	return ops
}

func yamlOperations(in []api.YAMLPatchOperation) []operation {
	ops := make([]operation, 0, len(in))
	for _, o := range in {
		ops = append(ops, fieldOperation(o.Operator, o.SubPath, o.Value.Raw))
	}
	return ops
}

// fieldOperation builds one patch operation from a policy's operator, path
// and raw value; remove carries no value.
func fieldOperation(op api.OverriderOperator, path string, raw []byte) operation {
	o := operation{Op: string(op), Path: path}
	if op != api.OverriderOpRemove {
		o.Value = rawValue(raw)
	}
	return o
}
