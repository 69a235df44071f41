package health

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ClusterStatus is what one member says about a template's object: Karmada's
// AggregatedStatusItem, plus the generations its observedGeneration rule
// needs.
type ClusterStatus struct {
	// Cluster is the member's name.
	Cluster string
	// Applied reports whether the object is in the member.
	Applied bool
	// AppliedMessage says why not when Applied is false ("not found",
	// "unreachable: …").
	AppliedMessage string
	// Health is the object's health in the member.
	Health Health
	// Message explains Health ("1/3 replicas available").
	Message string
	// Status is the reflected status (ReflectStatus); nil when none.
	Status map[string]any
	// Generation is the member object's metadata.generation.
	Generation int64
	// ObservedGeneration is the member object's status.observedGeneration.
	ObservedGeneration int64
	// ResourceTemplateGeneration is the generation of the resource template
	// the member object was rendered from.
	ResourceTemplateGeneration int64
}

// Reason is why the cluster is not healthy, or its health message: the
// AppliedMessage when the object is not applied, else Message.
func (c ClusterStatus) Reason() string {
	if !c.Applied && c.AppliedMessage != "" {
		return c.AppliedMessage
	}
	return c.Message
}

// Observe builds a member's ClusterStatus from the live object read there
// (nil when it does not exist). templateGeneration is the generation of the
// resource template the object was rendered from.
func Observe(cluster string, live *unstructured.Unstructured, templateGeneration int64) ClusterStatus {
	h, msg := Interpret(live)
	cs := ClusterStatus{Cluster: cluster, Health: h, Message: msg, ResourceTemplateGeneration: templateGeneration}
	if live == nil {
		cs.AppliedMessage = msg
		return cs
	}
	cs.Applied = true
	cs.Status = ReflectStatus(live)
	cs.Generation = live.GetGeneration()
	f := fields{obj: live.Object}
	cs.ObservedGeneration = f.num("status", "observedGeneration")
	return cs
}

// Aggregated is a template's health and status across its members.
type Aggregated struct {
	// Health is Healthy when every member has the object and it is healthy
	// everywhere, Unhealthy when it is unhealthy anywhere, and Unknown
	// otherwise, including when there are no members.
	Health Health
	// Clusters is the per-member status, sorted by cluster name.
	Clusters []ClusterStatus
	// Status is the template's aggregated status, nil for kinds whose
	// status is not aggregated.
	Status map[string]any
}

// NotHealthy lists the members whose object is not Healthy, in cluster order.
func (a Aggregated) NotHealthy() []ClusterStatus {
	var out []ClusterStatus
	for _, c := range a.Clusters {
		if !c.Applied || c.Health != Healthy {
			out = append(out, c)
		}
	}
	return out
}

// Summary lists the members that are not healthy with their reasons, as
// "member2: 1/3 replicas available; member3: not found". It is empty when
// every member is healthy.
func Summary(clusters []ClusterStatus) string {
	parts := make([]string, 0, len(clusters))
	for _, c := range clusters {
		parts = append(parts, c.Cluster+": "+c.Reason())
	}
	return strings.Join(parts, "; ")
}

// aggregator computes a template's aggregated status from the sorted
// per-member items.
type aggregator func(template *unstructured.Unstructured, items []ClusterStatus) map[string]any

// aggregators holds the kinds whose status is aggregated, as Karmada's
// default interpreter does.
var aggregators = map[schema.GroupKind]aggregator{
	{Group: "apps", Kind: "Deployment"}: sumWithGeneration(
		"replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas"),
	{Group: "apps", Kind: "StatefulSet"}: sumWithGeneration(
		"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"),
	{Group: "apps", Kind: "ReplicaSet"}: sumWithGeneration(
		"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
	{Group: "apps", Kind: "DaemonSet"}: sumWithGeneration(
		"currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled",
		"numberReady", "updatedNumberScheduled", "numberUnavailable"),
	{Group: "batch", Kind: "Job"}:                 aggregateJob,
	{Group: "", Kind: "Service"}:                  aggregateService,
	{Group: "networking.k8s.io", Kind: "Ingress"}: aggregateLoadBalancer,
}

// Aggregate combines the members' statuses of one template. The template is
// read for its kind, its metadata.generation and its current
// status.observedGeneration; it is not changed. items may be in any order.
func Aggregate(template *unstructured.Unstructured, items []ClusterStatus) Aggregated {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b ClusterStatus) int { return strings.Compare(a.Cluster, b.Cluster) })
	out := Aggregated{Health: overallHealth(sorted), Clusters: sorted}
	if template != nil {
		if agg, ok := aggregators[template.GroupVersionKind().GroupKind()]; ok {
			out.Status = agg(template, sorted)
		}
	}
	return out
}

// overallHealth: Unhealthy beats everything, because it is the one state
// that needs action; Healthy needs every member applied and healthy.
func overallHealth(items []ClusterStatus) Health {
	if len(items) == 0 {
		return Unknown
	}
	healthy := true
	for _, c := range items {
		if c.Health == Unhealthy {
			return Unhealthy
		}
		if !c.Applied || c.Health != Healthy {
			healthy = false
		}
	}
	if healthy {
		return Healthy
	}
	return Unknown
}

// sumWithGeneration sums the named status fields over the members and sets
// observedGeneration the way Karmada does for its workloads: to the
// template's generation only when every member runs an object rendered
// from that generation and its own controller has caught up with it;
// otherwise the template's previous observedGeneration stands. GitOps tools
// (Argo CD, Flux) read a template whose observedGeneration equals its
// generation as "rolled out", so it must not move early.
func sumWithGeneration(names ...string) aggregator {
	return func(template *unstructured.Unstructured, items []ClusterStatus) map[string]any {
		out := make(map[string]any, len(names)+1)
		for _, name := range names {
			out[name] = int64(0)
		}
		caughtUp := 0
		for _, c := range items {
			if c.Status != nil {
				f := fields{obj: c.Status}
				for _, name := range names {
					out[name] = out[name].(int64) + f.num(name)
				}
			}
			if c.Applied && c.ResourceTemplateGeneration == template.GetGeneration() && c.ObservedGeneration == c.Generation {
				caughtUp++
			}
		}
		if generation := template.GetGeneration(); generation > 0 && caughtUp == len(items) {
			out["observedGeneration"] = generation
		} else {
			f := fields{obj: template.Object}
			if previous, ok := f.integer("status", "observedGeneration"); ok {
				out["observedGeneration"] = previous
			}
		}
		return out
	}
}
