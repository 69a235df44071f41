package binding

import "testing"

func TestSameStored(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stored, want any
		same         bool
	}{
		{"equal", map[string]any{"replicas": int64(3)}, map[string]any{"replicas": int64(3)}, true},
		{"zero counts dropped by the apiserver", map[string]any{"replicas": int64(3), "observedGeneration": int64(2)},
			map[string]any{"replicas": int64(3), "unavailableReplicas": int64(0), "observedGeneration": int64(2)}, true},
		{"no stored status, zero aggregate", map[string]any(nil), map[string]any{"replicas": int64(0)}, true},
		{"a map against a scalar", int64(0), map[string]any{}, false},
		{"empty stored map, zero aggregate", map[string]any{}, map[string]any{"replicas": int64(0), "ready": false, "phase": ""}, true},
		{"a count changed", map[string]any{"replicas": int64(3)}, map[string]any{"replicas": int64(2)}, false},
		{"a count appears", map[string]any{}, map[string]any{"readyReplicas": int64(1)}, false},
		{"a stored field the aggregate no longer has", map[string]any{"readyReplicas": int64(1)}, map[string]any{}, false},
		{"nested zero", map[string]any{"a": map[string]any{"b": int64(1)}}, map[string]any{"a": map[string]any{"b": int64(1), "c": int64(0)}}, true},
		{"nested change", map[string]any{"a": map[string]any{"b": int64(1)}}, map[string]any{"a": map[string]any{"b": int64(2)}}, false},
		{"an empty map is not a zero scalar", map[string]any{}, map[string]any{"a": map[string]any{}}, false},
		{"lists compare whole", map[string]any{"c": []any{"x"}}, map[string]any{"c": []any{"x"}}, true},
		{"lists differ", map[string]any{"c": []any{"x"}}, map[string]any{"c": []any{"y"}}, false},
		{"int64 and float64 of one number differ", map[string]any{"n": int64(1)}, map[string]any{"n": float64(1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameStored(tc.stored, tc.want); got != tc.same {
				t.Errorf("sameStored(%v, %v) = %v, want %v", tc.stored, tc.want, got, tc.same)
			}
		})
	}
}
