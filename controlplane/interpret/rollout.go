package interpret

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rolloutRule says whether one kind's rollout is complete. generation is
// metadata.generation.
type rolloutRule func(r *fields, generation int64) (bool, string)

// RolloutComplete reports whether a workload's rollout is complete, as
// `kubectl rollout status` judges it, and says why not ("1 old replica(s)
// pending"). It is for rollout gates only, beside InterpretHealth and not
// instead of it: Karmada's health rule for a Deployment calls one of 1
// replica healthy while its new pod is broken (the old pod is still
// available), so a gate asks both. Failover and aggregation keep
// Karmada's rule alone.
//
// obj may be a live object, or what a member reported of it (a Work's
// manifest status: metadata.generation, the reflected status and no spec).
// A check that needs a missing spec field is skipped, as kubectl skips it
// when spec.replicas is nil; InterpretHealth on the live object covers it.
// Kinds without a rollout (everything but Deployment, StatefulSet and
// DaemonSet), a nil object, and the OnDelete update strategy, whose pods
// change only when someone deletes them, are complete.
func RolloutComplete(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return true, ""
	}
	rule := Of(obj).rollout
	if rule == nil {
		return true, ""
	}
	r := &fields{obj: obj.Object}
	done, msg := rule(r, obj.GetGeneration())
	if r.err != nil {
		return false, "cannot interpret status: " + r.err.Error()
	}
	return done, msg
}

// deploymentRollout is kubectl's DeploymentStatusViewer: the latest
// generation observed, every desired replica updated, no old replica left
// and every updated one available. A rollout past its progress deadline
// is not complete; kubectl fails there, a gate waits for its timeout.
func deploymentRollout(r *fields, generation int64) (bool, string) {
	if observed := r.num("status", "observedGeneration"); observed < generation {
		return false, fmt.Sprintf("waiting for the controller to observe generation %d (observed %d)", generation, observed)
	}
	if c := r.condition("Progressing"); c != nil && c["reason"] == "ProgressDeadlineExceeded" {
		return false, "progress deadline exceeded (" + conditionText(c) + ")"
	}
	total := r.num("status", "replicas")
	updated := r.num("status", "updatedReplicas")
	available := r.num("status", "availableReplicas")
	if replicas, ok := r.integer("spec", "replicas"); ok && updated < replicas {
		return false, fmt.Sprintf("%d/%d replicas updated", updated, replicas)
	}
	if total > updated {
		return false, fmt.Sprintf("%d old replica(s) pending", total-updated)
	}
	if available < updated {
		return false, fmt.Sprintf("%d/%d updated replicas available", available, updated)
	}
	return true, fmt.Sprintf("%d replica(s) rolled out", updated)
}

// statefulSetRollout is kubectl's StatefulSetStatusViewer: the latest
// generation observed, every desired replica ready, and the pods at or
// above the partition updated (or, without a rolling update section, the
// update revision current).
func statefulSetRollout(r *fields, generation int64) (bool, string) {
	if r.str("spec", "updateStrategy", "type") == "OnDelete" {
		return true, "OnDelete update strategy: pods change when deleted"
	}
	observed := r.num("status", "observedGeneration")
	if observed == 0 || observed < generation {
		return false, fmt.Sprintf("waiting for the controller to observe generation %d (observed %d)", generation, observed)
	}
	replicas, hasReplicas := r.integer("spec", "replicas")
	updated := r.num("status", "updatedReplicas")
	if ready := r.num("status", "readyReplicas"); hasReplicas && ready < replicas {
		return false, fmt.Sprintf("%d/%d replicas ready", ready, replicas)
	}
	if _, rolling := r.value("spec", "updateStrategy", "rollingUpdate"); rolling {
		partition, hasPartition := r.integer("spec", "updateStrategy", "rollingUpdate", "partition")
		if hasReplicas && hasPartition && updated < replicas-partition {
			return false, fmt.Sprintf("%d/%d replicas updated (partition %d)", updated, replicas-partition, partition)
		}
		return true, fmt.Sprintf("%d replica(s) updated", updated)
	}
	if update := r.str("status", "updateRevision"); update != r.str("status", "currentRevision") {
		return false, fmt.Sprintf("%d replica(s) at revision %s, rolling update in progress", updated, update)
	}
	return true, fmt.Sprintf("%d replica(s) updated", updated)
}

// daemonSetRollout is kubectl's DaemonSetStatusViewer: the latest
// generation observed, and every node that should run the pod runs the
// updated one, available.
func daemonSetRollout(r *fields, generation int64) (bool, string) {
	if r.str("spec", "updateStrategy", "type") == "OnDelete" {
		return true, "OnDelete update strategy: pods change when deleted"
	}
	if observed := r.num("status", "observedGeneration"); observed < generation {
		return false, fmt.Sprintf("waiting for the controller to observe generation %d (observed %d)", generation, observed)
	}
	desired := r.num("status", "desiredNumberScheduled")
	if updated := r.num("status", "updatedNumberScheduled"); updated < desired {
		return false, fmt.Sprintf("%d/%d pods updated", updated, desired)
	}
	if available := r.num("status", "numberAvailable"); available < desired {
		return false, fmt.Sprintf("%d/%d updated pods available", available, desired)
	}
	return true, fmt.Sprintf("%d pod(s) rolled out", desired)
}
