package examples

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// segment is one step of a Crossplane field path: a field name, a map key
// (labels[app]) or a list index (containers[0]).
type segment struct {
	name  string
	index int
	isIdx bool
}

func (s segment) String() string {
	if s.isIdx {
		return "[" + strconv.Itoa(s.index) + "]"
	}
	return "." + s.name
}

// parseFieldPath splits a field path as crossplane-runtime's fieldpath
// package reads it: dots between fields, brackets around indices and keys.
func parseFieldPath(p string) ([]segment, error) {
	var segs []segment
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("field path %q: unclosed bracket", p)
			}
			inner := strings.Trim(p[i+1:i+end], `"'`)
			if n, err := strconv.Atoi(inner); err == nil {
				segs = append(segs, segment{index: n, isIdx: true})
			} else {
				segs = append(segs, segment{name: inner})
			}
			i += end + 1
		default:
			end := strings.IndexAny(p[i:], ".[")
			if end < 0 {
				end = len(p) - i
			}
			segs = append(segs, segment{name: p[i : i+end]})
			i += end
		}
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("field path %q is empty", p)
	}
	return segs, nil
}

func pathString(segs []segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.String())
	}
	return strings.TrimPrefix(b.String(), ".")
}

// objectSchema is where a field path of one kind of object is resolved: its
// openAPI v3 schema, and the Go types of the parts the schema leaves open
// (metadata; a Manifest's embedded template).
type objectSchema struct {
	openAPI map[string]any
	// embedded maps a path prefix whose schema preserves unknown fields to
	// the Go type of what it holds.
	embedded map[string]reflect.Type
}

// resolve finds the type of the field at segs: "string", "integer",
// "number", "boolean", "object", "array", or "" when the schema leaves it
// open. It fails when a step names a field the schema does not have.
func (o objectSchema) resolve(segs []segment) (string, error) {
	if segs[0].name == "metadata" && !segs[0].isIdx {
		return resolveGo(reflect.TypeFor[metav1.ObjectMeta](), segs[1:], "metadata")
	}
	node := o.openAPI
	for i, s := range segs {
		at := pathString(segs[:i+1])
		if s.isIdx {
			if node["type"] != "array" {
				return "", fmt.Errorf("%s: %s is not a list", at, pathString(segs[:i]))
			}
			node, _ = node["items"].(map[string]any)
			continue
		}
		if child, ok := properties(node)[s.name]; ok {
			node = child
			if t, ok := o.embedded[at]; ok && i+1 < len(segs) {
				return resolveGo(t, segs[i+1:], at)
			}
			continue
		}
		switch ap := node["additionalProperties"].(type) {
		case map[string]any:
			node = ap
			continue
		case bool:
			if ap {
				return "", nil
			}
		}
		if node["x-kubernetes-preserve-unknown-fields"] == true {
			return "", nil
		}
		return "", fmt.Errorf("%s: the schema has no field %q here", at, s.name)
	}
	t, _ := node["type"].(string)
	return t, nil
}

func properties(node map[string]any) map[string]map[string]any {
	raw, _ := node["properties"].(map[string]any)
	out := make(map[string]map[string]any, len(raw))
	for k, v := range raw {
		if m, ok := v.(map[string]any); ok {
			out[k] = m
		}
	}
	return out
}

// resolveGo resolves segs in a Go API type by its JSON field names, as the
// apiserver would decode it, and returns the openAPI type of the field.
func resolveGo(t reflect.Type, segs []segment, prefix string) (string, error) {
	for i, s := range segs {
		at := prefix + pathString(segs[:i+1])
		if !s.isIdx {
			at = prefix + "." + pathString(segs[:i+1])
		}
		t = deref(t)
		switch {
		case s.isIdx:
			if t.Kind() != reflect.Slice {
				return "", fmt.Errorf("%s: %s is not a list", at, t)
			}
			t = t.Elem()
		case t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			f, ok := jsonField(t, s.name)
			if !ok {
				return "", fmt.Errorf("%s: %s has no field %q", at, t, s.name)
			}
			t = f
		default:
			return "", fmt.Errorf("%s: %s has no fields", at, t)
		}
	}
	return goType(deref(t)), nil
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonField finds the field with JSON name name, looking into inlined structs.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == "" && f.Anonymous {
			if ft, ok := jsonField(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}

// goType is the openAPI type a Go type is serialised as; "" for types with
// their own JSON form (quantities, int-or-string, times).
func goType(t reflect.Type) string {
	if _, ok := reflect.New(t).Interface().(interface{ MarshalJSON() ([]byte, error) }); ok {
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	default:
		return ""
	}
}

// leafPaths lists the path of every scalar, empty list and empty map in v,
// with the openAPI type of the value.
func leafPaths(v any, prefix []segment, out map[string]leaf) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[pathString(prefix)] = leaf{segs: clone(prefix), typ: "object"}
		}
		for k, c := range x {
			leafPaths(c, append(clone(prefix), segment{name: k}), out)
		}
	case []any:
		if len(x) == 0 {
			out[pathString(prefix)] = leaf{segs: clone(prefix), typ: "array"}
		}
		for i, c := range x {
			leafPaths(c, append(clone(prefix), segment{index: i, isIdx: true}), out)
		}
	default:
		out[pathString(prefix)] = leaf{segs: clone(prefix), typ: valueType(x)}
	}
}

// leaf is one scalar of an object and its type.
type leaf struct {
	segs []segment
	typ  string
}

func clone(s []segment) []segment { return append([]segment(nil), s...) }

func valueType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int32, int64:
		return "integer"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case nil:
		return ""
	default:
		return fmt.Sprintf("%T", v)
	}
}

// compatible says whether a value of type got may be stored where the
// schema says want; "" on either side is open.
func compatible(want, got string) bool {
	return want == "" || got == "" || want == got || (want == "number" && got == "integer")
}
