package health

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// Health is the health of one object in one member, or of a template across
// its members: the interpreter's Health, named here for the callers that
// aggregate.
type Health = interpret.Health

// The health values, Karmada's ResourceHealth values.
const (
	// Healthy: see interpret.Healthy.
	Healthy = interpret.Healthy
	// Unhealthy: see interpret.Unhealthy.
	Unhealthy = interpret.Unhealthy
	// Unknown: see interpret.Unknown.
	Unknown = interpret.Unknown
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
	cs, _ := ObserveWith(nil, cluster, live, templateGeneration)
	return cs
}

// ObserveWith is Observe with an Interpreter that knows customized kinds
// (nil for the built-in ones). A failing customized status reflection is
// returned as the error, with the rest of the ClusterStatus filled in.
func ObserveWith(in *interpret.Interpreter, cluster string, live *unstructured.Unstructured, templateGeneration int64) (ClusterStatus, error) {
	h, msg := in.InterpretHealth(live)
	cs := ClusterStatus{Cluster: cluster, Health: h, Message: msg, ResourceTemplateGeneration: templateGeneration}
	if live == nil {
		cs.AppliedMessage = msg
		return cs, nil
	}
	cs.Applied = true
	var err error
	cs.Status, err = in.ReflectStatus(live)
	cs.Generation = live.GetGeneration()
	cs.ObservedGeneration = interpret.ObservedGeneration(live)
	return cs, err
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

// Aggregate combines the members' statuses of one template. The template is
// read for its kind, its metadata.generation and its current
// status.observedGeneration; it is not changed. items may be in any order.
func Aggregate(template *unstructured.Unstructured, items []ClusterStatus) Aggregated {
	out, _ := AggregateWith(nil, template, items)
	return out
}

// AggregateWith is Aggregate with an Interpreter that knows customized
// kinds (nil for the built-in ones). A failing customized status
// aggregation is returned as the error, with Status nil and the rest of
// Aggregated filled in.
func AggregateWith(in *interpret.Interpreter, template *unstructured.Unstructured, items []ClusterStatus) (Aggregated, error) {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b ClusterStatus) int { return strings.Compare(a.Cluster, b.Cluster) })
	out := Aggregated{Health: overallHealth(sorted), Clusters: sorted}
	members := make([]interpret.Member, 0, len(sorted))
	for _, c := range sorted {
		members = append(members, interpret.Member{
			Cluster: c.Cluster, Applied: c.Applied, Status: c.Status, Generation: c.Generation,
			ObservedGeneration: c.ObservedGeneration, ResourceTemplateGeneration: c.ResourceTemplateGeneration,
		})
	}
	var err error
	out.Status, err = in.AggregateStatus(template, members)
	return out, err
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
