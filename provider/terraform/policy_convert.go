package terraform

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Conversions between Terraform values and Karmada JSON, both guided by the
// specField tree. Terraform → JSON builds the document that is decoded into
// the api types; JSON → Terraform builds state from Karmada YAML on import.

// valueError is a value that cannot be converted, at an attribute path.
type valueError struct {
	path path.Path
	msg  string
}

func (e *valueError) Error() string { return fmt.Sprintf("%s: %s", e.path, e.msg) }

// specEncoder holds what a Terraform → JSON conversion found besides the document.
type specEncoder struct {
	// rejected are the values, by attribute path (path.Path.String()),
	// that the document had to leave out because they cannot be decoded:
	// JSON that does not parse, an integer outside its Go type. The schema
	// validators reject them too.
	rejected map[string]*valueError
}

// objectJSON converts a known Terraform object into a Karmada JSON object.
// allowed names attributes outside fields that may be present and are ignored.
func (c *specEncoder) objectJSON(fields []*specField, v tftypes.Value, at path.Path, allowed map[string]bool) (map[string]any, error) {
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return nil, &valueError{at, "must be an object: " + err.Error()}
	}
	out := map[string]any{}
	for _, name := range sortedKeys(attrs) {
		f := findSpecField(fields, name)
		if f == nil {
			if allowed[name] {
				continue
			}
			return nil, &valueError{at.AtName(name), "unsupported attribute"}
		}
		av := attrs[name]
		if av.IsNull() {
			continue
		}
		j, ok, err := c.fieldJSON(f, av, at.AtName(name))
		if err != nil {
			return nil, err
		}
		if ok {
			out[f.jsonName] = j
		}
	}
	return out, nil
}

// fieldJSON converts one known, non-null value of field f. ok is false when
// the value is left out because the schema rejects it.
func (c *specEncoder) fieldJSON(f *specField, v tftypes.Value, at path.Path) (any, bool, error) {
	switch f.kind {
	case fieldString:
		var s string
		if err := v.As(&s); err != nil {
			return nil, false, &valueError{at, "must be a string"}
		}
		return s, true, nil
	case fieldJSONText:
		var s string
		if err := v.As(&s); err != nil {
			return nil, false, &valueError{at, "must be a string holding JSON"}
		}
		if !json.Valid([]byte(s)) {
			c.rejected[at.String()] = &valueError{at, "must hold valid JSON"}
			return nil, false, nil
		}
		return json.RawMessage(s), true, nil
	case fieldBool:
		var b bool
		if err := v.As(&b); err != nil {
			return nil, false, &valueError{at, "must be a bool"}
		}
		return b, true, nil
	case fieldInt:
		var n big.Float
		if err := v.As(&n); err != nil {
			return nil, false, &valueError{at, "must be a number"}
		}
		i, acc := n.Int64()
		if !n.IsInt() || acc != big.Exact {
			return nil, false, &valueError{at, "must be a whole number"}
		}
		if lo, hi := intRange(f.goKind); i < lo || i > hi {
			c.rejected[at.String()] = &valueError{at, fmt.Sprintf("%d is out of range [%d, %d]", i, lo, hi)}
			return nil, false, nil
		}
		return i, true, nil
	case fieldStringList:
		elems, err := listElems(v, at)
		if err != nil {
			return nil, false, err
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			var s string
			if e.IsNull() || e.As(&s) != nil {
				return nil, false, &valueError{at.AtListIndex(i), "must be a string"}
			}
			out[i] = s
		}
		return out, true, nil
	case fieldStringMap:
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, false, &valueError{at, "must be a map of strings"}
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			var s string
			if e.IsNull() || e.As(&s) != nil {
				return nil, false, &valueError{at.AtMapKey(k), "must be a string"}
			}
			out[k] = s
		}
		return out, true, nil
	case fieldQuantityMap:
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, false, &valueError{at, "must be a map of quantities"}
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			var s string
			if e.IsNull() || e.As(&s) != nil {
				return nil, false, &valueError{at.AtMapKey(k), "must be a quantity string"}
			}
			if err := quantityError(s); err != nil {
				// The schema's validator reports it on the key.
				c.rejected[at.AtMapKey(k).String()] = &valueError{at.AtMapKey(k), err.Error()}
				continue
			}
			out[k] = s
		}
		return out, true, nil
	case fieldObject:
		o, err := c.objectJSON(f.fields, v, at, nil)
		return o, err == nil, err
	case fieldObjectList:
		elems, err := listElems(v, at)
		if err != nil {
			return nil, false, err
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			if e.IsNull() {
				return nil, false, &valueError{at.AtListIndex(i), "must not be null"}
			}
			o, err := c.objectJSON(f.fields, e, at.AtListIndex(i), nil)
			if err != nil {
				return nil, false, err
			}
			out[i] = o
		}
		return out, true, nil
	}
	return nil, false, &valueError{at, "unsupported field"}
}

// listElems reads a list, set or tuple (a dynamic value may hold any of them).
func listElems(v tftypes.Value, at path.Path) ([]tftypes.Value, error) {
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, &valueError{at, "must be a list"}
	}
	return elems, nil
}

// specDecoder holds what a JSON → Terraform conversion found besides the value.
type specDecoder struct {
	// dropped are the Karmada paths of fields the resource has no attribute
	// for, with their values.
	dropped map[string]any
}

// objectValue converts a Karmada JSON object (from YAML, or a marshalled api
// type) into a Terraform object value of specObjectType(fields). karmada is the
// object's Karmada path, for messages.
func (c *specDecoder) objectValue(fields []*specField, doc map[string]any, karmada string) (map[string]tftypes.Value, error) {
	out := make(map[string]tftypes.Value, len(fields))
	for _, f := range fields {
		out[f.name] = tftypes.NewValue(f.tfType(), nil)
	}
	for _, k := range sortedKeys(doc) {
		raw := doc[k]
		f := findSpecJSONField(fields, k)
		if f == nil {
			c.dropped[joinKarmada(karmada, k)] = raw
			continue
		}
		v, err := c.fieldValue(f, raw, joinKarmada(karmada, k))
		if err != nil {
			return nil, err
		}
		out[f.name] = v
	}
	return out, nil
}

// fieldValue converts one JSON value of field f.
func (c *specDecoder) fieldValue(f *specField, raw any, karmada string) (tftypes.Value, error) {
	typ := f.tfType()
	if raw == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	bad := func(want string) (tftypes.Value, error) {
		return tftypes.Value{}, fmt.Errorf("%s: must be %s, got %T", karmada, want, raw)
	}
	switch f.kind {
	case fieldString:
		s, ok := raw.(string)
		if !ok {
			return bad("a string")
		}
		return tftypes.NewValue(typ, s), nil
	case fieldJSONText:
		b, err := json.Marshal(raw)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("%s: %w", karmada, err)
		}
		return tftypes.NewValue(typ, string(b)), nil
	case fieldBool:
		b, ok := raw.(bool)
		if !ok {
			return bad("a bool")
		}
		return tftypes.NewValue(typ, b), nil
	case fieldInt:
		n, ok := raw.(json.Number)
		if !ok {
			return bad("a number")
		}
		i, err := n.Int64()
		if err != nil {
			return bad("a whole number")
		}
		return tftypes.NewValue(typ, new(big.Float).SetInt64(i)), nil
	case fieldStringList:
		list, ok := raw.([]any)
		if !ok {
			return bad("a list of strings")
		}
		elems := make([]tftypes.Value, len(list))
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return tftypes.Value{}, fmt.Errorf("%s[%d]: must be a string", karmada, i)
			}
			elems[i] = tftypes.NewValue(tftypes.String, s)
		}
		return tftypes.NewValue(typ, elems), nil
	case fieldStringMap:
		m, ok := raw.(map[string]any)
		if !ok {
			return bad("a map of strings")
		}
		elems := make(map[string]tftypes.Value, len(m))
		for k, e := range m {
			s, ok := e.(string)
			if !ok {
				return tftypes.Value{}, fmt.Errorf("%s[%s]: must be a string", karmada, k)
			}
			elems[k] = tftypes.NewValue(tftypes.String, s)
		}
		return tftypes.NewValue(typ, elems), nil
	case fieldQuantityMap:
		m, ok := raw.(map[string]any)
		if !ok {
			return bad("a map of quantities")
		}
		elems := make(map[string]tftypes.Value, len(m))
		for k, e := range m {
			// YAML writes `cpu: 2` as a number.
			switch q := e.(type) {
			case string:
				elems[k] = tftypes.NewValue(tftypes.String, q)
			case json.Number:
				elems[k] = tftypes.NewValue(tftypes.String, q.String())
			default:
				return tftypes.Value{}, fmt.Errorf("%s[%s]: must be a quantity", karmada, k)
			}
		}
		return tftypes.NewValue(typ, elems), nil
	case fieldObject:
		m, ok := raw.(map[string]any)
		if !ok {
			return bad("an object")
		}
		attrs, err := c.objectValue(f.fields, m, karmada)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(typ, attrs), nil
	case fieldObjectList:
		list, ok := raw.([]any)
		if !ok {
			return bad("a list of objects")
		}
		elems := make([]tftypes.Value, len(list))
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				return tftypes.Value{}, fmt.Errorf("%s[%d]: must be an object", karmada, i)
			}
			attrs, err := c.objectValue(f.fields, m, fmt.Sprintf("%s[%d]", karmada, i))
			if err != nil {
				return tftypes.Value{}, err
			}
			elems[i] = tftypes.NewValue(specObjectType(f.fields), attrs)
		}
		return tftypes.NewValue(typ, elems), nil
	}
	return tftypes.Value{}, fmt.Errorf("%s: unsupported field", karmada)
}

func joinKarmada(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// fieldStep is one step of a Karmada field path: a name, or an index or map
// key in brackets.
type fieldStep struct {
	name    string
	index   string
	isIndex bool
}

// parseFieldPath splits a field.Path string such as
// "spec.rules[0].value[app.kubernetes.io/name]" into steps.
func parseFieldPath(s string) []fieldStep {
	var steps []fieldStep
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return append(steps, fieldStep{name: s})
			}
			steps = append(steps, fieldStep{index: s[1:end], isIndex: true})
			s = s[end+1:]
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			steps = append(steps, fieldStep{name: s[:end]})
			s = s[end:]
		}
	}
	return steps
}

// attributePath maps Karmada field path steps below a policy's spec to the
// attribute path below at. field is the attribute the whole path names, nil
// when the path ends at a list element or map entry, or when only a prefix
// could be mapped (complete is then false).
func attributePath(fields []*specField, steps []fieldStep, at path.Path) (p path.Path, field *specField, complete bool) {
	p = at
	var node *specField
	for _, st := range steps {
		if !st.isIndex {
			f := findSpecJSONField(fields, st.name)
			if f == nil {
				return p, nil, false
			}
			p, node, fields = p.AtName(f.name), f, nil
			if f.kind == fieldObject {
				fields = f.fields
			}
			continue
		}
		if node == nil {
			return p, nil, false
		}
		switch node.kind {
		case fieldObjectList, fieldStringList:
			i, err := strconv.Atoi(st.index)
			if err != nil {
				return p, nil, false
			}
			p, fields = p.AtListIndex(i), node.fields
		case fieldStringMap, fieldQuantityMap:
			p, fields = p.AtMapKey(st.index), nil
		default:
			return p, nil, false
		}
		node = nil
	}
	return p, node, true
}

// valueAt returns the value at steps in a Karmada JSON document, or nil.
func valueAt(doc any, steps []fieldStep) any {
	for _, st := range steps {
		switch t := doc.(type) {
		case map[string]any:
			if st.isIndex {
				doc = t[st.index]
			} else {
				doc = t[st.name]
			}
		case []any:
			i, err := strconv.Atoi(st.index)
			if !st.isIndex || err != nil || i < 0 || i >= len(t) {
				return nil
			}
			doc = t[i]
		default:
			return nil
		}
	}
	return doc
}
