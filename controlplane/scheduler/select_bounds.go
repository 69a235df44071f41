package scheduler

import (
	"cmp"
	"slices"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// groupBounds holds what any choice of k groups can give at best, so that
// selectByGroups can skip a group count without trying it. The bounds are
// prefix sums over the groups and candidates sorted by size and capacity,
// built once in O(n log n).
type groupBounds struct {
	cluster *api.SpreadConstraint
	// groupSize[k] is the most clusters any k groups hold.
	groupSize []int
	// groupCap[k] is the most capacity any k groups hold.
	groupCap []int64
	// clusterCap[m] is the most capacity any m clusters hold.
	clusterCap []int64
}

func (w *scratch) newGroupBounds(cands []candidate, groups []topologyGroup, cluster *api.SpreadConstraint) *groupBounds {
	if w == nil {
		w = new(scratch)
	}
	sizes := make([]int, len(groups))
	gcaps := make([]int64, len(groups))
	for i := range groups {
		sizes[i] = len(groups[i].members)
		gcaps[i] = max(groups[i].cap, 0)
	}
	ccaps := reuse(w.caps, len(cands))[:len(cands)]
	for i := range cands {
		// A negative capacity never helps; clamping keeps the prefix sums
		// upper bounds for any smaller choice too.
		ccaps[i] = max(cands[i].capacity(), 0)
	}
	desc := func(a, b int64) int { return cmp.Compare(b, a) }
	slices.SortFunc(sizes, func(a, b int) int { return cmp.Compare(b, a) })
	slices.SortFunc(gcaps, desc)
	// Ascending, summed from the end: slices.Sort on integers is several
	// times faster than a sort with a comparison function.
	slices.Sort(ccaps)
	w.caps, w.sums = ccaps, zeroed(w.sums, len(cands)+1)
	b := &groupBounds{
		cluster:    cluster,
		groupSize:  make([]int, len(groups)+1),
		groupCap:   make([]int64, len(groups)+1),
		clusterCap: w.sums,
	}
	for i := range sizes {
		b.groupSize[i+1] = b.groupSize[i] + sizes[i]
		b.groupCap[i+1] = b.groupCap[i] + gcaps[i]
	}
	for i := range ccaps {
		b.clusterCap[i+1] = b.clusterCap[i] + ccaps[len(ccaps)-1-i]
	}
	return b
}

// picks is how many clusters pickInGroups takes from k groups holding total
// clusters: every group's best, then fillers up to the cluster constraint's
// maxGroups.
func (b *groupBounds) picks(k, total int) int {
	if b.cluster == nil {
		return total
	}
	return max(maxGroups(b.cluster, total), k)
}

// ruleOut reports what no choice of k groups can satisfy: "clusters" when
// even the k largest groups give fewer picks than the cluster constraint's
// minGroups (every pass would fail so), "capacity" when the most the picks
// could hold is less than need, and "" when k is worth a swap pass.
func (b *groupBounds) ruleOut(k int, need int64) string {
	// picks grows with the clusters held, so the k largest groups bound it.
	most := b.picks(k, b.groupSize[k])
	if b.cluster != nil && most < minGroups(b.cluster) {
		return "clusters"
	}
	if need >= 0 && min(b.groupCap[k], b.clusterCap[most]) < need {
		return "capacity"
	}
	return ""
}
