package render

import (
	"encoding/json"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Equivalent reports whether two JSON-shaped values (maps, slices, strings,
// numbers, bools, nil) mean the same to Kubernetes: maps and lists compare
// element by element, numbers by value whatever their Go type, and two
// strings are also equal when both parse as the same resource quantity
// ("0.5" and "500m"), since the apiserver returns quantities in canonical
// form. Front ends use it to tell drift from a server's reformatting.
func Equivalent(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equivalent(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equivalent(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		qx, errx := resource.ParseQuantity(x)
		qy, erry := resource.ParseQuantity(y)
		return errx == nil && erry == nil && qx.Cmp(qy) == 0
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	fx, okx := number(a)
	fy, oky := number(b)
	return okx && oky && fx == fy
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
