package interpret

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// aggregateCronJob is Karmada's aggregateCronJobStatus: the members' active
// Jobs concatenated (in cluster order), and the latest lastScheduleTime and
// lastSuccessfulTime of any member.
func aggregateCronJob(_ *unstructured.Unstructured, items []Member) map[string]any {
	var active []any
	var scheduled, succeeded string
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		for _, ref := range f.maps("active") {
			active = append(active, copyJSON(ref))
		}
		scheduled = later(scheduled, f.str("lastScheduleTime"))
		succeeded = later(succeeded, f.str("lastSuccessfulTime"))
	}
	out := map[string]any{}
	if active != nil {
		out["active"] = active
	}
	if scheduled != "" {
		out["lastScheduleTime"] = scheduled
	}
	if succeeded != "" {
		out["lastSuccessfulTime"] = succeeded
	}
	return out
}

// podPhases is the order in which Karmada's aggregatePodStatus picks the
// template's phase: the first phase any member is in wins. Unknown is left
// out, as in Karmada (karmada#2137).
var podPhases = []string{"Failed", "Pending", "Running", "Succeeded"}

// aggregatePod is Karmada's aggregatePodStatus: the phase is the worst of
// the members' (a member whose status has not been collected counts as
// Pending), and the container and init container statuses of every member
// are listed with their ready flag and state. With no members the
// template's status is left as it is.
func aggregatePod(_ *unstructured.Unstructured, items []Member) map[string]any {
	if len(items) == 0 {
		return nil
	}
	phases := map[string]bool{}
	var containers, initContainers []any
	for _, c := range items {
		if c.Status == nil {
			phases["Pending"] = true
			continue
		}
		f := fields{obj: c.Status}
		phases[f.str("phase")] = true
		containers = append(containers, readyAndState(f.maps("containerStatuses"))...)
		initContainers = append(initContainers, readyAndState(f.maps("initContainerStatuses"))...)
	}
	out := map[string]any{}
	if phase := firstOf(podPhases, phases); phase != "" {
		out["phase"] = phase
	}
	if containers != nil {
		out["containerStatuses"] = containers
	}
	if initContainers != nil {
		out["initContainerStatuses"] = initContainers
	}
	return out
}

// readyAndState keeps what Karmada keeps of each container status.
func readyAndState(statuses []map[string]any) []any {
	out := make([]any, 0, len(statuses))
	for _, s := range statuses {
		c := map[string]any{"ready": s["ready"] == true}
		if state, ok := s["state"]; ok && state != nil {
			c["state"] = copyJSON(state)
		}
		out = append(out, c)
	}
	return out
}

// volumePhases is the order in which Karmada's
// aggregatePersistentVolumeStatus picks the volume's phase (karmada#2394).
var volumePhases = []string{"Failed", "Pending", "Available", "Bound", "Released"}

// aggregatePersistentVolume is Karmada's aggregatePersistentVolumeStatus:
// the first phase of volumePhases any member is in; a member whose status
// has not been collected counts as Pending.
func aggregatePersistentVolume(_ *unstructured.Unstructured, items []Member) map[string]any {
	phases := map[string]bool{}
	for _, c := range items {
		if c.Status == nil {
			phases["Pending"] = true
			continue
		}
		f := fields{obj: c.Status}
		phases[f.str("phase")] = true
	}
	out := map[string]any{}
	if phase := firstOf(volumePhases, phases); phase != "" {
		out["phase"] = phase
	}
	return out
}

// aggregatePersistentVolumeClaim is Karmada's
// aggregatePersistentVolumeClaimStatus: Bound unless a member says
// otherwise; Lost in any member wins, else the last member (in cluster
// order) that is not Bound gives its phase. Members without a status are
// skipped.
func aggregatePersistentVolumeClaim(_ *unstructured.Unstructured, items []Member) map[string]any {
	phase := "Bound"
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		p := f.str("phase")
		if p == "Lost" {
			phase = p
			break
		}
		if p != "Bound" {
			phase = p
		}
	}
	return map[string]any{"phase": phase}
}

// aggregatePodDisruptionBudget is Karmada's
// aggregatePodDisruptionBudgetStatus: the healthy, expected and allowed
// counts summed, and the disrupted pods of every member keyed
// "<cluster>/<pod>".
func aggregatePodDisruptionBudget(_ *unstructured.Unstructured, items []Member) map[string]any {
	names := []string{"currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed"}
	out := map[string]any{}
	for _, name := range names {
		out[name] = int64(0)
	}
	disrupted := map[string]any{}
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		for _, name := range names {
			out[name] = out[name].(int64) + f.num(name)
		}
		pods, _ := c.Status["disruptedPods"].(map[string]any)
		for pod, at := range pods {
			disrupted[c.Cluster+"/"+pod] = copyJSON(at)
		}
	}
	if len(disrupted) > 0 {
		out["disruptedPods"] = disrupted
	}
	return out
}

// aggregateHorizontalPodAutoscaler is Karmada's
// aggregateHorizontalPodAutoscalerStatus: currentReplicas and
// desiredReplicas summed over the members, so the template shows what the
// members' autoscalers did.
func aggregateHorizontalPodAutoscaler(_ *unstructured.Unstructured, items []Member) map[string]any {
	var current, desired int64
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		current += f.num("currentReplicas")
		desired += f.num("desiredReplicas")
	}
	return map[string]any{"currentReplicas": current, "desiredReplicas": desired}
}

// firstOf returns the first of order that is in set, "" when none is.
func firstOf(order []string, set map[string]bool) string {
	for _, p := range order {
		if set[p] {
			return p
		}
	}
	return ""
}
