package interpret

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Member is what one member says about a template's object, as far as
// aggregation reads it: Karmada's AggregatedStatusItem plus the generations
// its observedGeneration rule needs.
type Member struct {
	// Cluster is the member's name.
	Cluster string
	// Applied reports whether the object is in the member.
	Applied bool
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

// aggregator computes a template's aggregated status from the per-member
// items, sorted by cluster name.
type aggregator func(template *unstructured.Unstructured, items []Member) map[string]any

// AggregateStatus is Karmada's AggregateStatus: the template's status
// computed from its members' reflected statuses. The template is read for
// its kind, its metadata.generation and its current
// status.observedGeneration; it is not changed. items may be in any order.
// It returns nil for kinds whose status is not aggregated (every kind
// outside the built-in table).
func AggregateStatus(template *unstructured.Unstructured, items []Member) map[string]any {
	if template == nil {
		return nil
	}
	agg := Of(template).aggregate
	if agg == nil {
		return nil
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b Member) int { return strings.Compare(a.Cluster, b.Cluster) })
	return agg(template, sorted)
}

// sumWithGeneration sums the named status fields over the members and sets
// observedGeneration the way Karmada does for its workloads
// (aggregateDeploymentStatus and its siblings): to the template's
// generation only when every member runs an object rendered from that
// generation and its own controller has caught up with it; otherwise the
// template's previous observedGeneration stands. GitOps tools (Argo CD,
// Flux) read a template whose observedGeneration equals its generation as
// "rolled out", so it must not move early.
func sumWithGeneration(names ...string) aggregator {
	return func(template *unstructured.Unstructured, items []Member) map[string]any {
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
