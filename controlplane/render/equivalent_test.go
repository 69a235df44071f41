package render

import "testing"

func TestEquivalent(t *testing.T) {
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"same map", map[string]any{"a": "x", "n": int64(1)}, map[string]any{"a": "x", "n": float64(1)}, true},
		{"different value", map[string]any{"a": "x"}, map[string]any{"a": "y"}, false},
		{"missing key", map[string]any{"a": "x", "b": "y"}, map[string]any{"a": "x"}, false},
		{"extra key", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": nil}, false},
		{"canonical quantity", map[string]any{"cpu": "0.5"}, map[string]any{"cpu": "500m"}, true},
		{"memory quantity", "1024Mi", "1Gi", true},
		{"different quantity", "1", "2", false},
		{"image is not a quantity", "nginx:1.27", "nginx:1.28", false},
		{"list order matters", []any{"a", "b"}, []any{"b", "a"}, false},
		{"list equal", []any{map[string]any{"n": int64(2)}}, []any{map[string]any{"n": int64(2)}}, true},
		{"bool", true, true, true},
		{"bool vs string", true, "true", false},
		{"nil", nil, nil, true},
		{"nil vs empty map", nil, map[string]any{}, false},
		{"number vs string", int64(1), "1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Equivalent(tc.a, tc.b); got != tc.want {
				t.Errorf("Equivalent(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := Equivalent(tc.b, tc.a); got != tc.want {
				t.Errorf("Equivalent is not symmetric for %v, %v", tc.a, tc.b)
			}
		})
	}
}
