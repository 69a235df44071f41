package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// reflectedFields lists, per kind, the status fields Karmada's default
// interpreter reflects from a member. Kinds not listed reflect their whole
// status. observedGeneration is added for the three workloads whose
// aggregated observedGeneration depends on it (Karmada carries it beside the
// status for the same reason).
var reflectedFields = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}: {
		"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "observedGeneration",
	},
	{Group: "apps", Kind: "StatefulSet"}: {
		"replicas", "currentReplicas", "updatedReplicas", "readyReplicas", "availableReplicas", "observedGeneration",
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		"currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled",
		"numberReady", "updatedNumberScheduled", "numberUnavailable", "observedGeneration",
	},
	{Group: "batch", Kind: "Job"}: {
		"active", "succeeded", "failed", "conditions", "startTime", "completionTime",
	},
	{Group: "policy", Kind: "PodDisruptionBudget"}: {
		"disruptionsAllowed", "expectedPods", "desiredHealthy", "currentHealthy", "disruptedPods",
	},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {
		"currentReplicas", "desiredReplicas",
	},
}

var serviceKind = schema.GroupKind{Kind: "Service"}

// ReflectStatus returns the part of a live object's status worth carrying
// back to the template, per kind as Karmada reflects it: a subset for
// Deployment, StatefulSet, DaemonSet, Job, PodDisruptionBudget and
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
	gk := obj.GroupVersionKind().GroupKind()
	if gk == serviceKind {
		spec, _ := obj.Object["spec"].(map[string]any)
		if t, _ := spec["type"].(string); t != "LoadBalancer" {
			return nil
		}
		lb, ok := status["loadBalancer"]
		if !ok {
			return nil
		}
		return map[string]any{"loadBalancer": copyJSON(lb)}
	}
	names, ok := reflectedFields[gk]
	if !ok {
		return copyJSON(status).(map[string]any)
	}
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
