package interpret

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// aggregateJob sums active, succeeded and failed, and writes the template's
// conditions as Karmada does: Failed when the Job failed in any member,
// Complete when it completed in every member. startTime is the earliest
// member's and completionTime the latest, set only once every member has
// completed. A condition's lastTransitionTime is the latest of the members'
// matching conditions, so the result depends on its inputs alone (Karmada
// stamps the current time).
func aggregateJob(_ *unstructured.Unstructured, items []Member) map[string]any {
	var active, succeeded, failed int64
	var failedIn []string
	var failedAt, completeAt, startTime, completionTime string
	complete, completed := 0, 0
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		active += f.num("active")
		succeeded += f.num("succeeded")
		failed += f.num("failed")
		if cond := f.condition("Complete", "conditions"); conditionIs(cond, "True") {
			complete++
			completeAt = later(completeAt, condTime(cond))
		} else if cond := f.condition("Failed", "conditions"); conditionIs(cond, "True") {
			failedIn = append(failedIn, c.Cluster)
			failedAt = later(failedAt, condTime(cond))
		}
		startTime = earlier(startTime, f.str("startTime"))
		if s := f.str("completionTime"); s != "" {
			completed++
			completionTime = later(completionTime, s)
		}
	}
	out := map[string]any{"active": active, "succeeded": succeeded, "failed": failed}
	var conditions []any
	if len(failedIn) > 0 {
		conditions = append(conditions, jobCondition("Failed", "JobFailed",
			"Job failed in member clusters "+strings.Join(failedIn, ", "), failedAt))
	}
	if complete > 0 && complete == len(items) {
		conditions = append(conditions, jobCondition("Complete", "Completed", "Job completed", completeAt))
	}
	if conditions != nil {
		out["conditions"] = conditions
	}
	if startTime != "" {
		out["startTime"] = startTime
	}
	if completionTime != "" && completed == len(items) {
		out["completionTime"] = completionTime
	}
	return out
}

func jobCondition(conditionType, reason, message, at string) map[string]any {
	c := map[string]any{"type": conditionType, "status": "True", "reason": reason, "message": message}
	if at != "" {
		c["lastTransitionTime"] = at
	}
	return c
}

func condTime(c map[string]any) string {
	s, _ := c["lastTransitionTime"].(string)
	return s
}

// later returns the later of two RFC 3339 times; an empty or unparseable
// one loses, and a tie keeps a.
func later(a, b string) string {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	switch {
	case errB != nil:
		return a
	case errA != nil || tb.After(ta):
		return b
	default:
		return a
	}
}

// earlier returns the earlier of two RFC 3339 times; an empty or
// unparseable one loses, and a tie keeps a.
func earlier(a, b string) string {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	switch {
	case errB != nil:
		return a
	case errA != nil || tb.Before(ta):
		return b
	default:
		return a
	}
}

// aggregateService concatenates the members' load balancer ingresses for a
// LoadBalancer Service; other Services have no status to aggregate.
func aggregateService(template *unstructured.Unstructured, items []Member) map[string]any {
	if t, _, _ := unstructured.NestedString(template.Object, "spec", "type"); t != "LoadBalancer" {
		return nil
	}
	return aggregateLoadBalancer(template, items)
}

// aggregateLoadBalancer concatenates status.loadBalancer.ingress in cluster
// order. As in Karmada, an entry without a hostname gets the cluster's name
// as hostname, so a reader can tell which member an address belongs to.
func aggregateLoadBalancer(_ *unstructured.Unstructured, items []Member) map[string]any {
	var ingress []any
	for _, c := range items {
		if c.Status == nil {
			continue
		}
		f := fields{obj: c.Status}
		for _, entry := range f.maps("loadBalancer", "ingress") {
			entry = copyJSON(entry).(map[string]any)
			if h, _ := entry["hostname"].(string); h == "" {
				entry["hostname"] = c.Cluster
			}
			ingress = append(ingress, entry)
		}
	}
	lb := map[string]any{}
	if ingress != nil {
		lb["ingress"] = ingress
	}
	return map[string]any{"loadBalancer": lb}
}
