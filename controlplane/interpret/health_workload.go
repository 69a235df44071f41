package interpret

import (
	"fmt"
	"strings"
)

// deploymentHealth is Karmada's rule: the controller has observed the
// latest generation, every desired replica is updated and every updated
// replica is available.
func deploymentHealth(r *fields, generation int64) (Health, string) {
	if msg, ok := generationObserved(r, generation); !ok {
		return Unhealthy, msg
	}
	replicas, hasReplicas := r.integer("spec", "replicas")
	updated := r.num("status", "updatedReplicas")
	available := r.num("status", "availableReplicas")
	if !hasReplicas {
		replicas = updated
	}
	stalled := ""
	if c := r.condition("Progressing"); conditionIs(c, "False") {
		stalled = " (" + conditionText(c) + ")"
	}
	if hasReplicas && updated < replicas {
		return Unhealthy, fmt.Sprintf("%d/%d replicas updated", updated, replicas) + stalled
	}
	if available < updated {
		return Unhealthy, fmt.Sprintf("%d/%d replicas available", available, replicas) + stalled
	}
	return Healthy, fmt.Sprintf("%d/%d replicas available", available, replicas)
}

// replicaSetHealth is Karmada's rule: the controller has observed the
// latest generation and every desired replica is available.
func replicaSetHealth(r *fields, generation int64) (Health, string) {
	if msg, ok := generationObserved(r, generation); !ok {
		return Unhealthy, msg
	}
	replicas, hasReplicas := r.integer("spec", "replicas")
	available := r.num("status", "availableReplicas")
	if !hasReplicas {
		replicas = available
	}
	msg := fmt.Sprintf("%d/%d replicas available", available, replicas)
	if available < replicas {
		return Unhealthy, msg
	}
	return Healthy, msg
}

// statefulSetHealth is Karmada's rule, which follows `kubectl rollout
// status`: a partitioned rolling update is done once the pods at or above
// the partition are updated, and every pod, updated or not, is available.
func statefulSetHealth(r *fields, generation int64) (Health, string) {
	if msg, ok := generationObserved(r, generation); !ok {
		return Unhealthy, msg
	}
	updated := r.num("status", "updatedReplicas")
	available := r.num("status", "availableReplicas")
	replicas, hasReplicas := r.integer("spec", "replicas")
	if hasReplicas {
		wantUpdated := replicas - r.num("spec", "updateStrategy", "rollingUpdate", "partition")
		if updated < wantUpdated {
			return Unhealthy, fmt.Sprintf("%d/%d replicas updated", updated, wantUpdated)
		}
		if available < replicas {
			return Unhealthy, fmt.Sprintf("%d/%d replicas available", available, replicas)
		}
	} else {
		replicas = updated
	}
	if available < updated {
		return Unhealthy, fmt.Sprintf("%d/%d updated replicas available", available, updated)
	}
	return Healthy, fmt.Sprintf("%d/%d replicas available", available, replicas)
}

// daemonSetHealth is Karmada's rule: the controller has observed the latest
// generation, every node that should run the pod runs the updated one, and
// every updated pod is available.
func daemonSetHealth(r *fields, generation int64) (Health, string) {
	if msg, ok := generationObserved(r, generation); !ok {
		return Unhealthy, msg
	}
	desired := r.num("status", "desiredNumberScheduled")
	updated := r.num("status", "updatedNumberScheduled")
	available := r.num("status", "numberAvailable")
	if updated < desired {
		return Unhealthy, fmt.Sprintf("%d/%d pods updated", updated, desired)
	}
	if available < updated {
		return Unhealthy, fmt.Sprintf("%d/%d pods available", available, desired)
	}
	return Healthy, fmt.Sprintf("%d/%d pods available", available, desired)
}

// jobHealth waits for the Complete condition and reports the Failed one.
// Karmada has no native Job rule (it would call every Job healthy); flotilla
// judges by the conditions the Job controller sets when it finishes, so
// waiting for a Job means waiting for it to complete. A suspended Job is
// healthy: it is doing what it was told.
func jobHealth(r *fields, _ int64) (Health, string) {
	succeeded := r.num("status", "succeeded")
	if c := r.condition("Complete"); conditionIs(c, "True") {
		return Healthy, fmt.Sprintf("complete: %d succeeded", succeeded)
	}
	if c := r.condition("Failed"); conditionIs(c, "True") {
		return Unhealthy, "failed: " + conditionText(c)
	}
	if r.boolean("spec", "suspend") {
		return Healthy, "suspended"
	}
	active := r.num("status", "active")
	if completions, ok := r.integer("spec", "completions"); ok {
		return Unhealthy, fmt.Sprintf("running: %d active, %d/%d succeeded", active, succeeded, completions)
	}
	return Unhealthy, fmt.Sprintf("running: %d active, %d succeeded", active, succeeded)
}

// cronJobHealth is healthy once the CronJob exists: its status only records
// the Jobs it started, whose own health belongs to them.
func cronJobHealth(r *fields, _ int64) (Health, string) {
	if r.boolean("spec", "suspend") {
		return Healthy, "suspended"
	}
	msg := fmt.Sprintf("%d active", len(r.maps("status", "active")))
	if last := r.str("status", "lastScheduleTime"); last != "" {
		msg += ", last scheduled " + last
	}
	return Healthy, msg
}

// podHealth is Karmada's rule: Succeeded, or Running with the Ready
// condition true. The message names the first waiting container's reason
// (ImagePullBackOff, CrashLoopBackOff) because that is what a user needs.
func podHealth(r *fields, _ int64) (Health, string) {
	phase := r.str("status", "phase")
	ready := conditionIs(r.condition("Ready"), "True")
	switch {
	case phase == "Succeeded":
		return Healthy, "Succeeded"
	case phase == "Running" && ready:
		return Healthy, "Running and ready"
	case phase == "Failed":
		if reason := r.str("status", "reason"); reason != "" {
			return Unhealthy, "Failed: " + reason
		}
		return Unhealthy, "Failed"
	}
	if phase == "" {
		phase = "no phase yet"
	}
	var waiting []string
	for _, cs := range r.maps("status", "containerStatuses") {
		container := fields{obj: cs}
		if reason := container.str("state", "waiting", "reason"); reason != "" {
			waiting = append(waiting, container.str("name")+" "+reason)
		}
		r.fail(container.err)
	}
	if phase == "Running" {
		phase = "Running, not ready"
	}
	if len(waiting) > 0 {
		return Unhealthy, phase + ": " + strings.Join(waiting, ", ")
	}
	return Unhealthy, phase
}
