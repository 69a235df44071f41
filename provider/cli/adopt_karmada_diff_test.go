package cli

import "testing"

// TestFirstDifference: the member object holds its Work when every field
// of the Work is there with the same value; the member's defaults do not
// count, anything else names the first differing path.
func TestFirstDifference(t *testing.T) {
	for _, tc := range []struct {
		name       string
		want, have map[string]any
		path       string
	}{
		{"equal", map[string]any{"data": map[string]any{"k": "v"}}, map[string]any{"data": map[string]any{"k": "v"}}, ""},
		{"member defaults held", map[string]any{"spec": map[string]any{"replicas": int64(2)}},
			map[string]any{"spec": map[string]any{"replicas": int64(2), "revisionHistoryLimit": int64(10)}}, ""},
		{"numbers by value", map[string]any{"n": float64(2)}, map[string]any{"n": int64(2)}, ""},
		{"changed scalar", map[string]any{"data": map[string]any{"mode": "blue"}}, map[string]any{"data": map[string]any{"mode": "green"}}, "data.mode"},
		{"missing field", map[string]any{"data": map[string]any{"k": "v"}}, map[string]any{"data": map[string]any{}}, "data.k"},
		{"list length", map[string]any{"l": []any{"a"}}, map[string]any{"l": []any{"a", "b"}}, "l"},
		{"list element", map[string]any{"l": []any{map[string]any{"image": "a:1"}}},
			map[string]any{"l": []any{map[string]any{"image": "a:2", "imagePullPolicy": "IfNotPresent"}}}, "l[0].image"},
		{"type changed", map[string]any{"spec": map[string]any{"x": "1"}}, map[string]any{"spec": "1"}, "spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _, _ := firstDifference(tc.want, tc.have, ""); got != tc.path {
				t.Errorf("firstDifference = %q, want %q", got, tc.path)
			}
		})
	}
}
