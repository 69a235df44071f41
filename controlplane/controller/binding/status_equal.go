package binding

import "k8s.io/apimachinery/pkg/api/equality"

// sameStored reports whether writing want over stored would change nothing
// the apiserver keeps. A built-in kind's status drops zero values on the
// way in (Deployment's replicas, readyReplicas, unavailableReplicas … are
// omitempty), so an aggregated status that says "readyReplicas: 0" reads
// back without the field; compared as they are, the two never match and
// every pass over the binding, a restart's first among them, rewrote the
// template's status with the same content (issue 20). A key missing on one
// side therefore matches a zero scalar (0, "", false, null) on the other;
// anything else is compared as equality.Semantic does.
func sameStored(stored, want any) bool {
	sm, ok1 := stored.(map[string]any)
	wm, ok2 := want.(map[string]any)
	if !ok1 || !ok2 {
		if ok1 != ok2 {
			return false
		}
		return equality.Semantic.DeepEqual(stored, want)
	}
	for k, w := range wm {
		s, ok := sm[k]
		if !ok {
			if !zeroScalar(w) {
				return false
			}
			continue
		}
		if !sameStored(s, w) {
			return false
		}
	}
	for k, s := range sm {
		if _, ok := wm[k]; !ok && !zeroScalar(s) {
			return false
		}
	}
	return true
}

// zeroScalar reports whether v is a JSON scalar the apiserver omits as
// empty: null, 0, "" or false.
func zeroScalar(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case int64:
		return x == 0
	case int32:
		return x == 0
	case int:
		return x == 0
	case float64:
		return x == 0
	case string:
		return x == ""
	case bool:
		return !x
	}
	return false
}
