package health

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// Gated is cs as a rollout gate judges it: besides the interpreter's
// health, the member's rollout must be complete (interpret.RolloutComplete
// on obj, `kubectl rollout status`). A member Healthy by Karmada's rule whose
// rollout is not complete (a 1-replica Deployment whose new pod is broken
// keeps its old pod available) is Unhealthy, with the reason
// "rollout not complete: 1 old replica(s) pending". obj is the live object,
// or Reported(cs) where only the member's report is at hand. Other members
// are returned as they are.
func Gated(cs ClusterStatus, obj *unstructured.Unstructured) ClusterStatus {
	if !cs.Applied || cs.Health != Healthy || obj == nil {
		return cs
	}
	if done, why := interpret.RolloutComplete(obj); !done {
		cs.Health, cs.Message = Unhealthy, "rollout not complete: "+why
	}
	return cs
}

// Reported is the object a member's report describes, for Gated: the kind,
// the member object's generation and its reflected status (with
// observedGeneration), and no spec, which a report does not carry.
func Reported(gvk schema.GroupVersionKind, cs ClusterStatus) *unstructured.Unstructured {
	status := maps.Clone(cs.Status)
	if status == nil {
		status = map[string]any{}
	}
	if _, ok := status["observedGeneration"]; !ok && cs.ObservedGeneration != 0 {
		status["observedGeneration"] = cs.ObservedGeneration
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	obj.SetGroupVersionKind(gvk)
	obj.SetGeneration(cs.Generation)
	return obj
}
