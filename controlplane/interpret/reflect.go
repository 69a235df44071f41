package interpret

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// reflector picks the part of a live object's non-empty status worth
// carrying back; nil means nothing.
type reflector func(obj, status map[string]any) map[string]any

// reflectWhole carries the whole status, Karmada's reflectWholeStatus.
func reflectWhole(_, status map[string]any) map[string]any {
	return copyJSON(status).(map[string]any)
}

// reflectFields carries the named status fields, as Karmada's per-kind
// reflectors do. observedGeneration is among them for the workloads whose
// aggregated observedGeneration depends on it (Karmada carries it beside the
// status for the same reason).
func reflectFields(names ...string) reflector {
	return func(_, status map[string]any) map[string]any {
		out := map[string]any{}
		for _, name := range names {
			if v, ok := status[name]; ok && v != nil {
				out[name] = copyJSON(v)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
}

// reflectService carries status.loadBalancer of a LoadBalancer Service and
// nothing for other Services, as Karmada's reflectServiceStatus.
func reflectService(obj, status map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	if t, _ := spec["type"].(string); t != "LoadBalancer" {
		return nil
	}
	lb, ok := status["loadBalancer"]
	if !ok {
		return nil
	}
	return map[string]any{"loadBalancer": copyJSON(lb)}
}

// ReflectStatus returns the part of a live object's status worth carrying
// back to the template, per kind as Karmada's ReflectStatus does: a subset
// for Deployment, StatefulSet, DaemonSet, Job, PodDisruptionBudget and
// HorizontalPodAutoscaler, status.loadBalancer for a LoadBalancer Service
// (nothing for other Services), and the whole status for every other kind.
// It returns nil when there is nothing to reflect. The result is a deep copy
// whose numbers are int64, safe to keep and to compare.
func ReflectStatus(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	status, ok := obj.Object["status"].(map[string]any)
	if !ok || len(status) == 0 {
		return nil
	}
	reflect := Of(obj).reflect
	if reflect == nil {
		reflect = reflectWhole
	}
	return reflect(obj.Object, status)
}

// ObservedGeneration is a live object's status.observedGeneration, 0 when
// absent or not a whole number.
func ObservedGeneration(obj *unstructured.Unstructured) int64 {
	f := fields{obj: obj.Object}
	return f.num("status", "observedGeneration")
}

// copyJSON deep-copies a JSON-shaped value. Unlike
// runtime.DeepCopyJSONValue it accepts the int and float64 integers of
// hand-built objects and turns them into int64, so reflected statuses
// compare equal however their object was made.
func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyJSON(e)
		}
		return out
	case int, int32, float64:
		if n, ok := toInt64(x); ok {
			return n
		}
		return x
	default:
		return x
	}
}
