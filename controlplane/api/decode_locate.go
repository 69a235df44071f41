package api

import (
	"encoding/json"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// locateDecodeError finds the value in a JSON document that does not decode
// into obj's type and returns its exact path, list indices and map keys
// included ("spec.placement.spreadConstraints[0].maxGroups",
// "status.resourceSummary.allocatable[cpu]"). encoding/json's own errors
// drop the indices, and values with their own decoders (quantities, times)
// report no path at all. ok is false when no single value is to blame.
func locateDecodeError(data []byte, obj any) (*field.Error, bool) {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, false //nolint:nilerr // not valid JSON: the caller reports the decoder's own error
	}
	return locate(doc, reflect.TypeOf(obj), nil)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func locate(v any, t reflect.Type, at *field.Path) (*field.Error, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil, false
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || t.Kind() != reflect.Struct && t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
		return leaf(v, t, at)
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return leaf(v, t, at)
		}
		return locateFields(m, t, at)
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			return leaf(v, t, at)
		}
		for i, e := range list {
			if fe, ok := locate(e, t.Elem(), index(at, i)); ok {
				return fe, true
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return leaf(v, t, at)
		}
		for _, k := range sortedKeys(m) {
			if fe, ok := locate(m[k], t.Elem(), key(at, k)); ok {
				return fe, true
			}
		}
	}
	return nil, false
}

// locateFields follows a struct's JSON fields, inline ones included.
func locateFields(m map[string]any, t reflect.Type, at *field.Path) (*field.Error, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			if fe, ok := locateFields(m, f.Type, at); ok {
				return fe, true
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if v, present := m[name]; present {
			if fe, ok := locate(v, f.Type, child(at, name)); ok {
				return fe, true
			}
		}
	}
	return nil, false
}

// leaf tries to decode one value into its type.
func leaf(v any, t reflect.Type, at *field.Path) (*field.Error, bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, false //nolint:nilerr // cannot happen for decoded JSON; no value to blame
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		if at == nil {
			at = field.NewPath("<object>")
		}
		detail := err.Error()
		if te, ok := err.(*json.UnmarshalTypeError); ok {
			detail = "must be of type " + te.Type.String()
		}
		return field.Invalid(at, v, detail), true
	}
	return nil, false
}

func child(at *field.Path, name string) *field.Path {
	if at == nil {
		return field.NewPath(name)
	}
	return at.Child(name)
}

func index(at *field.Path, i int) *field.Path {
	if at == nil {
		return field.NewPath("").Index(i)
	}
	return at.Index(i)
}

func key(at *field.Path, k string) *field.Path {
	if at == nil {
		return field.NewPath("").Key(k)
	}
	return at.Key(k)
}
