package interpret

import (
	"fmt"
	"strings"
)

// serviceHealth is Karmada's rule: a LoadBalancer Service needs an ingress
// address; every other type is healthy once it exists.
func serviceHealth(r *fields, _ int64) (Health, string) {
	serviceType := r.str("spec", "type")
	if serviceType == "" {
		serviceType = "ClusterIP"
	}
	if serviceType != "LoadBalancer" {
		return Healthy, "type " + serviceType
	}
	return loadBalancerHealth(r)
}

// ingressHealth is Karmada's rule: an Ingress needs a load balancer address.
func ingressHealth(r *fields, _ int64) (Health, string) {
	return loadBalancerHealth(r)
}

// loadBalancerHealth looks for an IP or hostname in
// status.loadBalancer.ingress, which Services and Ingresses share.
func loadBalancerHealth(r *fields) (Health, string) {
	var addresses []string
	for _, ing := range r.maps("status", "loadBalancer", "ingress") {
		entry := fields{obj: ing}
		if ip := entry.str("ip"); ip != "" {
			addresses = append(addresses, ip)
		} else if host := entry.str("hostname"); host != "" {
			addresses = append(addresses, host)
		}
		r.fail(entry.err)
	}
	if len(addresses) == 0 {
		return Unhealthy, "waiting for load balancer ingress"
	}
	return Healthy, "load balancer at " + strings.Join(addresses, ", ")
}

// persistentVolumeHealth: a volume is usable when Available (waiting for a
// claim) or Bound. Karmada has no rule for it.
func persistentVolumeHealth(r *fields, _ int64) (Health, string) {
	switch phase := r.str("status", "phase"); phase {
	case "Bound", "Available":
		return Healthy, phase
	case "":
		return Unhealthy, "no phase yet"
	default:
		return Unhealthy, phase
	}
}

// persistentVolumeClaimHealth is Karmada's rule: the claim is Bound. A claim
// of a WaitForFirstConsumer storage class stays Pending until a pod uses it,
// and so stays unhealthy until then.
func persistentVolumeClaimHealth(r *fields, _ int64) (Health, string) {
	phase := r.str("status", "phase")
	if phase == "Bound" {
		return Healthy, phase
	}
	if phase == "" {
		phase = "no phase yet"
	}
	return Unhealthy, phase
}

// podDisruptionBudgetHealth is Karmada's rule: at least as many healthy
// pods as the budget wants.
func podDisruptionBudgetHealth(r *fields, _ int64) (Health, string) {
	current := r.num("status", "currentHealthy")
	desired := r.num("status", "desiredHealthy")
	msg := fmt.Sprintf("%d/%d desired pods healthy", current, desired)
	if current < desired {
		return Unhealthy, msg
	}
	return Healthy, msg
}

// horizontalPodAutoscalerHealth: Karmada's native interpreter reflects an
// autoscaler's currentReplicas and desiredReplicas but has no health rule
// (so calls it healthy). Flotilla reads the same two fields plus the
// conditions the autoscaler controller sets, as Argo CD does: the
// controller has observed the latest spec, it is able to scale, its metrics
// work (ScalingActive is only false without a failure when scaling is
// disabled by a zero-replica target), and it has reached the count it wants.
func horizontalPodAutoscalerHealth(r *fields, generation int64) (Health, string) {
	if msg, ok := generationObserved(r, generation); !ok {
		return Unhealthy, msg
	}
	if c := r.condition("AbleToScale"); conditionIs(c, "False") {
		return Unhealthy, "unable to scale: " + conditionText(c)
	}
	if c := r.condition("ScalingActive"); conditionIs(c, "False") {
		if reason, _ := c["reason"].(string); reason != "ScalingDisabled" {
			return Unhealthy, "scaling inactive: " + conditionText(c)
		}
	}
	current := r.num("status", "currentReplicas")
	desired := r.num("status", "desiredReplicas")
	if current != desired {
		return Unhealthy, fmt.Sprintf("scaling from %d to %d replicas", current, desired)
	}
	return Healthy, fmt.Sprintf("%d replicas, as desired", current)
}
