package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Replica strategies, named as in Karmada.
const (
	strategyDuplicated    = "Duplicated"
	strategyAggregated    = "Aggregated"
	strategyStaticWeight  = "StaticWeight"
	strategyDynamicWeight = "DynamicWeight"
)

// strategy assigns the binding's replicas to the selected clusters: the
// replicas of each, by position in a.selected. Clusters given none are left
// out of the result.
type strategy func(a *assignment) ([]int32, error)

// strategies maps a strategy name to its implementation. The map is never
// modified.
var strategies = map[string]strategy{
	strategyDuplicated:    assignDuplicated,
	strategyStaticWeight:  assignStaticWeight,
	strategyDynamicWeight: assignDynamic,
	strategyAggregated:    assignDynamic,
}

// strategyOf names the strategy a placement asks for, applying Karmada's
// defaults: no replicaScheduling means Duplicated, an empty type means
// Divided, and Divided without a preference means Weighted.
func strategyOf(p *api.Placement) (string, error) {
	rs := p.ReplicaScheduling
	if rs == nil {
		return strategyDuplicated, nil
	}
	switch rs.ReplicaSchedulingType {
	case api.ReplicaSchedulingTypeDuplicated:
		return strategyDuplicated, nil
	case "", api.ReplicaSchedulingTypeDivided:
	default:
		return "", fmt.Errorf("unknown replicaSchedulingType %q", rs.ReplicaSchedulingType)
	}
	switch rs.ReplicaDivisionPreference {
	case api.ReplicaDivisionPreferenceAggregated:
		return strategyAggregated, nil
	case "", api.ReplicaDivisionPreferenceWeighted:
		if rs.WeightPreference == nil || rs.WeightPreference.DynamicWeight == "" {
			return strategyStaticWeight, nil
		}
		if rs.WeightPreference.DynamicWeight != api.DynamicWeightByAvailableReplicas {
			return "", fmt.Errorf("unknown dynamicWeight %q", rs.WeightPreference.DynamicWeight)
		}
		return strategyDynamicWeight, nil
	default:
		return "", fmt.Errorf("unknown replicaDivisionPreference %q", rs.ReplicaDivisionPreference)
	}
}

// DividesByAvailability reports whether a placement divides its replicas
// by what fits in each cluster: Divided with dynamic weights by available
// replicas, or Aggregated. Only such a binding may be descheduled (Karmada's
// IsReplicaDynamicDivided): static weights and Duplicated place replicas
// by the policy alone, whatever fits, so moving their replicas would go
// against the policy. A placement that does not parse divides by nothing.
func DividesByAvailability(p *api.Placement) bool {
	name, err := strategyOf(p)
	return err == nil && usesAvailability(name)
}

// usesAvailability reports whether a strategy divides by what fits in the
// clusters, which makes capacity matter when selecting clusters.
func usesAvailability(name string) bool {
	return name == strategyDynamicWeight || name == strategyAggregated
}

// assignment is the input of a strategy.
type assignment struct {
	binding *Binding
	// snap is the Snapshot being scheduled over, if any.
	snap     *Snapshot
	strategy string
	// selected are the chosen clusters in preference order.
	selected []candidate
	order    tieOrder
	// buf holds the decision's working slices; nil allocates them.
	buf *scratch
}

// assignDuplicated gives every selected cluster all replicas.
func assignDuplicated(a *assignment) ([]int32, error) {
	result := a.result()
	for i := range result {
		result[i] = a.binding.Replicas
	}
	return result, nil
}

// assignStaticWeight divides the replicas by static weights with the Webster
// method. A cluster's weight is the largest weight of the rules that match
// it; clusters with weight zero get nothing; if no cluster has a positive
// weight (or no weights are given) every cluster weighs 1.
//
// Like Karmada it does not look at the previous result: Webster is house
// monotone, so raising the replica count never takes a replica away from a
// cluster, and the result depends only on the weights and the count.
func assignStaticWeight(a *assignment) ([]int32, error) {
	var rules []api.StaticClusterWeight
	if wp := a.binding.Placement.ReplicaScheduling.WeightPreference; wp != nil {
		rules = wp.StaticWeightList
	}
	// On the Snapshot path a rule's clusters are looked up by index; the
	// rules of one policy are evaluated over the fleet once per Snapshot.
	matchers := make([]func(*candidate) bool, len(rules))
	for r := range rules {
		if a.snap != nil {
			sel := a.snap.selected(&rules[r].TargetCluster)
			matchers[r] = func(c *candidate) bool { return sel[c.index] }
			continue
		}
		m := policy.NewClusterMatcher(&rules[r].TargetCluster)
		matchers[r] = func(c *candidate) bool { return m(c.cluster) }
	}
	parties := a.parties(len(a.selected))
	positive := false
	for i := range a.selected {
		c := &a.selected[i]
		var w int64
		for r := range rules {
			if rules[r].Weight > w && matchers[r](c) {
				w = rules[r].Weight
			}
		}
		parties[i] = party{name: c.name(), votes: w}
		positive = positive || w > 0
	}
	if !positive {
		for i := range parties {
			parties[i].votes = 1
		}
	}
	a.buf.apportion(parties, a.binding.Replicas, a.order)
	result := a.result()
	for i := range parties {
		result[i] = parties[i].seats
	}
	return result, nil
}

// assignDynamic divides the replicas by what fits in each cluster
// (DynamicWeight: AvailableReplicas) or packs them into as few clusters as
// fit (Aggregated), steadily as Karmada does:
//
//   - the replica count did not change: the previous result stands;
//   - scale-up: only the new replicas are divided, by available replicas,
//     and added to the previous result; Aggregated offers them to the
//     clusters already in use first;
//   - scale-down: the new count is divided by the previous result as weights
//     (Aggregated keeps only the largest previous clusters that hold it);
//   - Fresh: everything is divided anew, with each cluster's weight being
//     what fits plus what it already runs.
//
// With overflow affinities the clusters form tiers: new replicas fill the
// primary tier up to what fits there before spilling into the next, and a
// scale-down empties the last tier first.
//
// As in Karmada's buildScheduledClusters, only previous clusters that are
// still selected count as the previous result: replicas on a cluster
// filtered out since are placed again, as a scale-up.
func assignDynamic(a *assignment) ([]int32, error) {
	tiers := splitTiers(a.selected)
	desired := int64(a.binding.Replicas)
	result := a.result()
	capacity := func(c *candidate) int64 { return c.capacity() }
	previous := func(c *candidate) int64 { return int64(c.previous) }
	available := func(c *candidate) int64 { return c.available }

	if a.binding.Fresh {
		if room := a.sum(nil, capacity); room < desired {
			return nil, fmt.Errorf("clusters can hold %d replicas, %d wanted", room, desired)
		}
		left := desired
		for _, tier := range tiers {
			take := min(left, a.sum(tier, capacity))
			a.divide(tier, take, capacity, nil, result)
			left -= take
		}
		return result, nil
	}

	assigned := a.sum(nil, previous)
	switch {
	case assigned == desired:
		return a.previousResult(result), nil
	case assigned < desired:
		grow := desired - assigned
		if room := a.sum(nil, available); room < grow {
			return nil, fmt.Errorf("clusters have room for %d more replicas, %d more wanted", room, grow)
		}
		a.previousResult(result)
		for _, tier := range tiers {
			take := min(grow, a.sum(tier, available))
			a.divide(tier, take, available, previous, result)
			grow -= take
		}
		return result, nil
	default:
		excess := assigned - desired
		for t := len(tiers) - 1; t >= 0; t-- {
			had := a.sum(tiers[t], previous)
			cut := min(excess, had)
			excess -= cut
			if cut == 0 {
				for _, i := range tiers[t] {
					result[i] = a.selected[i].previous
				}
				continue
			}
			a.divide(tiers[t], had-cut, previous, nil, result)
		}
		return result, nil
	}
}

// sum adds f over the selected clusters at the given indexes, or over all
// selected clusters when idx is nil.
func (a *assignment) sum(idx []int, f func(*candidate) int64) int64 {
	var n int64
	if idx == nil {
		for i := range a.selected {
			n += f(&a.selected[i])
		}
		return n
	}
	for _, i := range idx {
		n += f(&a.selected[i])
	}
	return n
}

// divide hands n replicas to the tier's clusters (indexes into selected) by
// weight, adding them to result. For Aggregated only the fewest clusters, in
// weight order with clusters of positive prior first (then by name, then
// by position, as a stable sort by name would leave them), whose weights
// cover n take part. Webster itself does not depend on the order of the
// parties.
func (a *assignment) divide(tier []int, n int64, weight, prior func(*candidate) int64, result []int32) {
	if n <= 0 {
		return
	}
	members := tier
	if a.strategy == strategyAggregated {
		members = a.members(tier)
		before := func(i, j int) bool {
			ci, cj := &a.selected[i], &a.selected[j]
			if prior != nil {
				if pi, pj := prior(ci) > 0, prior(cj) > 0; pi != pj {
					return pi
				}
			}
			if wi, wj := weight(ci), weight(cj); wi != wj {
				return wi > wj
			}
			if ni, nj := ci.name(), cj.name(); ni != nj {
				return ni < nj
			}
			return i < j
		}
		members = members[:coverFirst(members, n, before, func(i int) int64 { return weight(&a.selected[i]) })]
	}
	parties := a.parties(len(members))
	for k, i := range members {
		parties[k] = party{name: a.selected[i].name(), votes: weight(&a.selected[i])}
	}
	a.buf.apportion(parties, clampInt32(n), a.order)
	for k, i := range members {
		result[i] += parties[k].seats
	}
}

// parties is n zero parties, in a.buf when there is one. The parties of
// one division are used up before the next division asks for its own.
func (a *assignment) parties(n int) []party {
	if a.buf == nil {
		return make([]party, n)
	}
	a.buf.parties = zeroed(a.buf.parties, n)
	return a.buf.parties
}

// members is a copy of tier that divide may reorder, in a.buf when there
// is one.
func (a *assignment) members(tier []int) []int {
	if a.buf == nil {
		return append([]int(nil), tier...)
	}
	a.buf.order = append(reuse(a.buf.order, len(tier)), tier...)
	return a.buf.order
}

// previousResult writes the previous replicas of the selected clusters into
// result and returns it.
func (a *assignment) previousResult(result []int32) []int32 {
	for i := range a.selected {
		result[i] = a.selected[i].previous
	}
	return result
}

// result is a zero replica count per selected cluster, in a.buf when there
// is one.
func (a *assignment) result() []int32 {
	if a.buf == nil {
		return make([]int32, len(a.selected))
	}
	a.buf.result = zeroed(a.buf.result, len(a.selected))
	return a.buf.result
}

// splitTiers groups the indexes of the selected clusters by affinity tier,
// in tier order.
func splitTiers(selected []candidate) [][]int {
	var tiers [][]int
	tierOf := map[int]int{}
	var order []int
	for i := range selected {
		t := selected[i].tier
		k, ok := tierOf[t]
		if !ok {
			k = len(tiers)
			tierOf[t] = k
			tiers = append(tiers, nil)
			order = append(order, t)
		}
		tiers[k] = append(tiers[k], i)
	}
	sort.Sort(byTier{order, tiers})
	return tiers
}

// byTier sorts tiers by their tier number.
type byTier struct {
	order []int
	tiers [][]int
}

func (b byTier) Len() int           { return len(b.order) }
func (b byTier) Less(i, j int) bool { return b.order[i] < b.order[j] }
func (b byTier) Swap(i, j int) {
	b.order[i], b.order[j] = b.order[j], b.order[i]
	b.tiers[i], b.tiers[j] = b.tiers[j], b.tiers[i]
}

// sortTargets sorts a result by cluster name.
func sortTargets(out []api.TargetCluster) {
	slices.SortFunc(out, func(x, y api.TargetCluster) int { return strings.Compare(x.Name, y.Name) })
}
