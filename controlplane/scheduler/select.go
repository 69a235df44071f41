package scheduler

import (
	"container/heap"
	"fmt"
	"sort"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// spreadPlan is the spread constraints of a placement sorted by role.
type spreadPlan struct {
	// cluster bounds the number of clusters; nil when absent.
	cluster *api.SpreadConstraint
	// group is the coarsest topology constraint (provider, region, zone,
	// label); it drives the group selection. Nil when absent.
	group *api.SpreadConstraint
	// others are the remaining topology constraints, checked on the result.
	others []api.SpreadConstraint
	// groups, on the Snapshot path, are the clusters' groups under group.
	groups *spreadGroups
}

// planSpread sorts the constraints. A constraint naming neither a field nor a
// label spreads by cluster. When several topology constraints are given, the
// coarsest selects: provider, then region, then zone, then labels in order.
func planSpread(constraints []api.SpreadConstraint) spreadPlan {
	var p spreadPlan
	var topo []api.SpreadConstraint
	for i := range constraints {
		sc := constraints[i]
		if sc.SpreadByLabel == "" && (sc.SpreadByField == "" || sc.SpreadByField == api.SpreadByFieldCluster) {
			if p.cluster == nil {
				p.cluster = &sc
			}
			continue
		}
		topo = append(topo, sc)
	}
	rank := func(sc api.SpreadConstraint) int {
		if sc.SpreadByLabel != "" {
			return 3
		}
		switch sc.SpreadByField {
		case api.SpreadByFieldProvider:
			return 0
		case api.SpreadByFieldRegion:
			return 1
		default:
			return 2
		}
	}
	sort.SliceStable(topo, func(i, j int) bool { return rank(topo[i]) < rank(topo[j]) })
	if len(topo) > 0 {
		p.group = &topo[0]
		p.others = topo[1:]
	}
	return p
}

// groupKey is the value a cluster is grouped by under sc.
func groupKey(sc *api.SpreadConstraint, c *api.Cluster) string {
	if sc.SpreadByLabel != "" {
		return c.Labels[sc.SpreadByLabel]
	}
	switch sc.SpreadByField {
	case api.SpreadByFieldProvider:
		return c.Spec.Provider
	case api.SpreadByFieldRegion:
		return c.Spec.Region
	case api.SpreadByFieldZone:
		return zoneOf(c)
	}
	return c.Name
}

// groupKind names what sc groups by, for messages.
func groupKind(sc *api.SpreadConstraint) string {
	if sc.SpreadByLabel != "" {
		return fmt.Sprintf("label %q", sc.SpreadByLabel)
	}
	return string(sc.SpreadByField)
}

func minGroups(sc *api.SpreadConstraint) int { return max(sc.MinGroups, 1) }

// maxGroups is the constraint's upper bound, or n when it sets none.
func maxGroups(sc *api.SpreadConstraint, n int) int {
	if sc.MaxGroups <= 0 || sc.MaxGroups > n {
		return n
	}
	return sc.MaxGroups
}

// selectClusters picks, from candidates sorted by preference, the clusters
// the template goes to. need is the number of replicas the picked clusters
// must be able to hold, or -1 when capacity does not matter (Duplicated,
// non-workloads). It returns the picked candidates in preference order, in
// w's slices when they are not cands itself.
func (w *scratch) selectClusters(cands []candidate, plan spreadPlan, need int64) ([]candidate, error) {
	var picked []candidate
	var err error
	switch {
	case plan.group != nil:
		picked, err = w.selectByGroups(cands, plan, need)
	case plan.cluster != nil:
		picked, err = w.selectByCluster(cands, plan.cluster, need)
	default:
		return cands, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range plan.others {
		sc := &plan.others[i]
		seen := map[string]bool{}
		for j := range picked {
			seen[groupKey(sc, picked[j].cluster)] = true
		}
		if n := len(seen); n < minGroups(sc) || (sc.MaxGroups > 0 && n > sc.MaxGroups) {
			return nil, fmt.Errorf("the selected clusters span %d groups by %s, want %s",
				n, groupKind(sc), groupRange(sc))
		}
	}
	return picked, nil
}

func groupRange(sc *api.SpreadConstraint) string {
	if sc.MaxGroups > 0 {
		return fmt.Sprintf("between %d and %d", minGroups(sc), sc.MaxGroups)
	}
	return fmt.Sprintf("at least %d", minGroups(sc))
}

// selectByCluster takes the most preferred clusters up to maxGroups. For
// Divided workloads whose picks cannot hold the replicas it swaps, from the
// least preferred pick backwards, a pick for the unpicked cluster with the
// most capacity when that is larger (Karmada's selectClustersByAvailableResource).
func (w *scratch) selectByCluster(cands []candidate, sc *api.SpreadConstraint, need int64) ([]candidate, error) {
	if w == nil {
		w = new(scratch)
	}
	if len(cands) < minGroups(sc) {
		return nil, fmt.Errorf("the number of feasible clusters %d is less than spreadConstraint.minGroups %d",
			len(cands), minGroups(sc))
	}
	want := maxGroups(sc, len(cands))
	picked := append(reuse(w.picked, want), cands[:want]...)
	rest := append(reuse(w.pool, len(cands)-want), cands[want:]...)
	w.picked, w.pool = picked, rest
	if need >= 0 && !w.swapForCapacity(picked, rest, need) {
		return nil, fmt.Errorf("no enough resource when selecting %d clusters: %d replicas wanted, the best %d clusters hold %d",
			want, need, want, bestCapacity(cands, want))
	}
	return picked, nil
}

// swapForCapacity swaps picks for larger unpicked candidates, from the last
// pick backwards, until the picks hold need replicas. It reports whether they
// do. The unpicked candidate taken is the one with the largest capacity,
// the earliest on ties; a heap finds it and the running total is kept, so a
// call costs O((picks + rest) log rest) rather than O(picks × rest).
func (w *scratch) swapForCapacity(picked, rest []candidate, need int64) bool {
	total := totalCapacity(picked)
	if total >= need || len(rest) == 0 {
		return total >= need
	}
	w.heapIdx = reuse(w.heapIdx, len(rest))[:len(rest)]
	h := &restHeap{rest: rest, idx: w.heapIdx}
	for i := range h.idx {
		h.idx[i] = i
	}
	heap.Init(h)
	for k := len(picked) - 1; k >= 0 && total < need; k-- {
		j := h.idx[0]
		if gain := rest[j].capacity() - picked[k].capacity(); gain > 0 {
			total += gain
			picked[k], rest[j] = rest[j], picked[k]
			// The candidate swapped out takes j's place, so ties keep
			// resolving to the earliest position as a scan would.
			heap.Fix(h, 0)
		}
	}
	return total >= need
}

// restHeap orders positions of rest by capacity, largest first, then by
// position.
type restHeap struct {
	rest []candidate
	idx  []int
}

func (h *restHeap) Len() int { return len(h.idx) }
func (h *restHeap) Less(a, b int) bool {
	ca, cb := h.rest[h.idx[a]].capacity(), h.rest[h.idx[b]].capacity()
	if ca != cb {
		return ca > cb
	}
	return h.idx[a] < h.idx[b]
}
func (h *restHeap) Swap(a, b int) { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }

// Push completes heap.Interface; the heap never grows or shrinks.
func (h *restHeap) Push(x any) { h.idx = append(h.idx, x.(int)) }

// Pop completes heap.Interface.
func (h *restHeap) Pop() any {
	last := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return last
}

func totalCapacity(cs []candidate) int64 {
	var n int64
	for i := range cs {
		n += cs[i].capacity()
	}
	return n
}

// bestCapacity is the most any n candidates can hold, for messages.
func bestCapacity(cands []candidate, n int) int64 {
	caps := make([]int64, len(cands))
	for i := range cands {
		caps[i] = cands[i].capacity()
	}
	sort.Slice(caps, func(i, j int) bool { return caps[i] > caps[j] })
	var sum int64
	for i := 0; i < n && i < len(caps); i++ {
		sum += caps[i]
	}
	return sum
}

// topologyGroup is the candidates sharing one group key.
type topologyGroup struct {
	key     string
	members []int // indexes into the candidate slice, in preference order
	cap     int64
	// id is the group's number in the order groups were met, as
	// scratch.groupOf numbers each candidate's group.
	id int
}

// maxFailedPasses is how many group counts may pass the bounds of
// groupBounds.ruleOut and still fail their swap pass before the search jumps
// to maxGroups. Each pass costs O(groups × clusters log clusters), so
// without it a fleet of many small groups could try every count.
const maxFailedPasses = 32

// selectByGroups chooses groups first, then clusters inside them.
//
// Groups are ordered like their best cluster (tier, score), then by total
// capacity and key. Starting from minGroups groups, the most preferred ones
// are tried; if they cannot satisfy the cluster constraint's minGroups or
// hold the replicas, groups are swapped from the last backwards for the
// strongest unpicked group, and if that is not enough one more group is
// taken, up to maxGroups. This is Karmada's region selection (fewest groups,
// best score) with its cluster capacity swap carried to groups, and without
// its exhaustive search over group combinations.
//
// The search is bounded: a group count that no choice of groups could
// satisfy (groupBounds) is skipped without a swap pass, and after
// maxFailedPasses failed passes only maxGroups is tried. Skipping changes
// nothing but the time taken; the jump can only change which feasible
// answer is found, and only for fleets with more than 32 group counts that
// pass the bounds yet fail.
//
// Inside the chosen groups every group contributes its best cluster; the rest
// are filled by preference up to the cluster constraint's maxGroups, with the
// same capacity swap among the fillers.
func (w *scratch) selectByGroups(cands []candidate, plan spreadPlan, need int64) ([]candidate, error) {
	if w == nil {
		w = new(scratch)
	}
	sc := plan.group
	groups := w.buildGroups(cands, sc, plan.groups)
	if len(groups) < minGroups(sc) {
		return nil, fmt.Errorf("the number of feasible %s groups %d is less than spreadConstraint.minGroups %d",
			groupKind(sc), len(groups), minGroups(sc))
	}
	if sc.MaxGroups > 0 && sc.MaxGroups < minGroups(sc) {
		// Validation refuses this; the check keeps Schedule total.
		return nil, fmt.Errorf("spreadConstraint.maxGroups %d by %s is lower than minGroups %d",
			sc.MaxGroups, groupKind(sc), minGroups(sc))
	}
	hi := maxGroups(sc, len(groups))
	bounds := w.newGroupBounds(cands, groups, plan.cluster)
	short := "clusters"
	failed := 0
	for k := minGroups(sc); k <= hi; k++ {
		if failed >= maxFailedPasses {
			k = hi
		}
		why := bounds.ruleOut(k, need)
		if why == "" {
			var picked []candidate
			if picked, why = w.swapPass(cands, groups, k, plan.cluster, need); why == "" {
				return picked, nil
			}
			failed++
		}
		if why == "capacity" {
			short = "capacity"
		}
	}
	if short == "capacity" {
		return nil, fmt.Errorf("no enough resource when selecting up to %d %s groups: %d replicas wanted",
			hi, groupKind(sc), need)
	}
	return nil, fmt.Errorf("the number of clusters in up to %d %s groups is less than the cluster spreadConstraint.minGroups %d",
		hi, groupKind(sc), minGroups(plan.cluster))
}

// swapPass tries k groups: the k most preferred, then, while they fall
// short, each from the last backwards swapped for the strongest unpicked
// group. It returns the picks, or what was short ("clusters" or
// "capacity").
func (w *scratch) swapPass(cands []candidate, groups []topologyGroup, k int, cluster *api.SpreadConstraint, need int64) ([]candidate, string) {
	chosen := append([]topologyGroup(nil), groups[:k]...)
	others := append([]topologyGroup(nil), groups[k:]...)
	picked, ok, why := w.pickInGroups(cands, chosen, cluster, need)
	for g := k - 1; !ok && g >= 0; g-- {
		best := strongestGroup(others, chosen[g], why)
		if best < 0 {
			continue
		}
		chosen[g], others[best] = others[best], chosen[g]
		picked, ok, why = w.pickInGroups(cands, chosen, cluster, need)
	}
	if ok {
		return picked, ""
	}
	return nil, why
}

// buildGroups groups the candidates by sc, numbering each candidate's
// group in w.groupOf. The members of all groups share one slice of w.
// known, when not nil, are the Snapshot's groups under sc.
func (w *scratch) buildGroups(cands []candidate, sc *api.SpreadConstraint, known *spreadGroups) []topologyGroup {
	if w == nil {
		w = new(scratch)
	}
	index := map[string]int{}
	if known != nil {
		// Position of each known group among this decision's groups.
		w.groupPos = reuse(w.groupPos, len(known.keys))[:len(known.keys)]
		for i := range w.groupPos {
			w.groupPos[i] = -1
		}
	}
	var groups []topologyGroup
	var sizes []int
	w.groupOf = reuse(w.groupOf, len(cands))[:len(cands)]
	for i := range cands {
		var key string
		var g int
		var ok bool
		if known != nil {
			id := known.of[cands[i].index]
			key, g = known.keys[id], int(w.groupPos[id])
			ok = g >= 0
			if !ok {
				w.groupPos[id] = int32(len(groups)) // #nosec G115 -- fewer groups than clusters.
			}
		} else {
			key = groupKey(sc, cands[i].cluster)
			g, ok = index[key]
			if !ok {
				index[key] = len(groups)
			}
		}
		if !ok {
			g = len(groups)
			groups = append(groups, topologyGroup{key: key, id: g})
			sizes = append(sizes, 0)
		}
		w.groupOf[i] = int32(g) // #nosec G115 -- fewer groups than candidates.
		sizes[g]++
		groups[g].cap += cands[i].capacity()
	}
	w.members = reuse(w.members, len(cands))[:len(cands)]
	w.groupState = zeroed(w.groupState, len(groups))
	start := 0
	for g := range groups {
		groups[g].members = w.members[start : start : start+sizes[g]]
		start += sizes[g]
	}
	for i := range cands {
		g := &groups[w.groupOf[i]]
		g.members = append(g.members, i)
	}
	// Candidates are sorted, so a group's first member is its best one.
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := &cands[groups[i].members[0]], &cands[groups[j].members[0]]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.score != b.score {
			return a.score > b.score
		}
		if groups[i].cap != groups[j].cap {
			return groups[i].cap > groups[j].cap
		}
		return groups[i].key < groups[j].key
	})
	return groups
}

// strongestGroup is the unpicked group that most improves on g in what is
// short (cluster count or capacity), or -1 if none does.
func strongestGroup(others []topologyGroup, g topologyGroup, why string) int {
	strength := func(t topologyGroup) int64 {
		if why == "capacity" {
			return t.cap
		}
		return int64(len(t.members))
	}
	best, bestStrength := -1, strength(g)
	for i := range others {
		if s := strength(others[i]); s > bestStrength {
			best, bestStrength = i, s
		}
	}
	return best
}

// pickInGroups picks clusters inside the chosen groups and reports whether
// they satisfy the cluster constraint and the capacity, and if not, which of
// the two is short ("clusters" or "capacity").
//
// The picks live in w.picked: a later call overwrites them, which is why
// callers only call again after a failed pick.
func (w *scratch) pickInGroups(cands []candidate, chosen []topologyGroup, cluster *api.SpreadConstraint, need int64) ([]candidate, bool, string) {
	picked, pool := reuse(w.picked, len(cands)), reuse(w.pool, len(cands))
	// The other members of the chosen groups, in preference order across
	// groups: a group's first candidate met is its best one, which it
	// contributes as a pick.
	const (
		notChosen = iota
		chosenBestNext
		chosenRest
	)
	for _, g := range chosen {
		picked = append(picked, cands[g.members[0]])
		w.groupState[g.id] = chosenBestNext
	}
	for i := range cands {
		switch state := &w.groupState[w.groupOf[i]]; *state {
		case chosenBestNext:
			*state = chosenRest
		case chosenRest:
			pool = append(pool, cands[i])
		}
	}
	for _, g := range chosen {
		w.groupState[g.id] = notChosen
	}
	w.picked, w.pool = picked, pool
	total := len(picked) + len(pool)
	want := total
	if cluster != nil {
		want = max(maxGroups(cluster, total), len(picked))
	}
	fill := want - len(picked)
	picked = append(picked, pool[:fill]...)
	rest := pool[fill:]
	if cluster != nil && len(picked) < minGroups(cluster) {
		return nil, false, "clusters"
	}
	if need >= 0 && !w.swapForCapacity(picked[len(chosen):], rest, need-totalCapacity(picked[:len(chosen)])) {
		return nil, false, "capacity"
	}
	return picked, true, ""
}
