package override

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// operation is one RFC 6902 operation. Value is raw JSON so a policy's value
// reaches the patch exactly as the user wrote it.
type operation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// nullJSON is what an add or replace without a value sets, as in Karmada,
// where an empty apiextensions JSON marshals to null.
var nullJSON = json.RawMessage("null")

// rawValue turns a user value into patch JSON; empty means null.
func rawValue(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return nullJSON
	}
	return json.RawMessage(raw)
}

// stringValue encodes a Go string as a JSON value for an operation.
func stringValue(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// patchBytes applies ops to a JSON document with evanphx/json-patch, the
// library Karmada uses, so error texts and edge cases (negative indices,
// missing paths) are the same.
func patchBytes(doc []byte, ops []operation) ([]byte, error) {
	if len(ops) == 0 {
		return doc, nil
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decode patch: %w", err)
	}
	return patch.Apply(doc)
}

// patchObject applies ops to an unstructured object's content and replaces
// the content with the result. Numbers come back as int64 or float64, the
// only number types unstructured's deep copy accepts.
func patchObject(obj map[string]any, ops []operation) (map[string]any, error) {
	if len(ops) == 0 {
		return obj, nil
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	patched, err := patchBytes(doc, ops)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(patched, &out); err != nil {
		return nil, fmt.Errorf("decode patched object: %w", err)
	}
	return out, nil
}

// escapePointerToken escapes one reference token of a JSON pointer
// (RFC 6901), so label keys like "app.kubernetes.io/name" stay one token.
func escapePointerToken(token string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}

// pointerTokens splits a JSON pointer into unescaped tokens. The empty
// pointer refers to the whole document and has no tokens.
func pointerTokens(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("path %q must start with /", pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for i, t := range tokens {
		tokens[i] = unescape.Replace(t)
	}
	return tokens, nil
}

// getPointer resolves a JSON pointer in decoded JSON.
func getPointer(doc any, pointer string) (any, error) {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return nil, err
	}
	cur := doc
	for i, token := range tokens {
		switch node := cur.(type) {
		case map[string]any:
			next, ok := node[token]
			if !ok {
				return nil, fmt.Errorf("path %q: no field %q", pointer, strings.Join(tokens[:i+1], "/"))
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(token)
			if err != nil || idx < 0 || idx >= len(node) {
				return nil, fmt.Errorf("path %q: index %q out of range", pointer, token)
			}
			cur = node[idx]
		default:
			return nil, fmt.Errorf("path %q: %q is not an object or a list", pointer, strings.Join(tokens[:i], "/"))
		}
	}
	return cur, nil
}

// getStringPointer resolves a JSON pointer that must name a string.
func getStringPointer(doc any, pointer string) (string, error) {
	v, err := getPointer(doc, pointer)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("path %q holds %s, not a string", pointer, jsonKind(v))
	}
	return s, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
