package scheduler

import (
	"fmt"
	"sort"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// The functions below are group selection as it was before the search was
// bounded: every group count from minGroups to maxGroups gets the full swap
// pass, and the capacity swap recomputes totals and scans every unpicked
// candidate. It is kept only as the reference the bounded search must agree
// with (TestSelectByGroupsMatchesExhaustive); it is far too slow for large
// fleets (BenchmarkScheduleSpreadByLabel).

// exhaustiveSelectByGroups chooses groups first, then clusters inside them.
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
// Inside the chosen groups every group contributes its best cluster; the rest
// are filled by preference up to the cluster constraint's maxGroups, with the
// same capacity swap among the fillers.
func exhaustiveSelectByGroups(cands []candidate, plan spreadPlan, need int64) ([]candidate, error) {
	sc := plan.group
	groups := new(scratch).buildGroups(cands, sc, nil)
	if len(groups) < minGroups(sc) {
		return nil, fmt.Errorf("the number of feasible %s groups %d is less than spreadConstraint.minGroups %d",
			groupKind(sc), len(groups), minGroups(sc))
	}
	short := "clusters"
	for k := minGroups(sc); k <= maxGroups(sc, len(groups)); k++ {
		chosen := append([]topologyGroup(nil), groups[:k]...)
		others := append([]topologyGroup(nil), groups[k:]...)
		picked, ok, why := exhaustivePickInGroups(cands, chosen, plan.cluster, need)
		for g := k - 1; !ok && g >= 0; g-- {
			best := strongestGroup(others, chosen[g], why)
			if best < 0 {
				continue
			}
			chosen[g], others[best] = others[best], chosen[g]
			picked, ok, why = exhaustivePickInGroups(cands, chosen, plan.cluster, need)
		}
		if ok {
			return picked, nil
		}
		if why == "capacity" {
			short = "capacity"
		}
	}
	if short == "capacity" {
		return nil, fmt.Errorf("no enough resource when selecting up to %d %s groups: %d replicas wanted",
			maxGroups(sc, len(groups)), groupKind(sc), need)
	}
	return nil, fmt.Errorf("the number of clusters in up to %d %s groups is less than the cluster spreadConstraint.minGroups %d",
		maxGroups(sc, len(groups)), groupKind(sc), minGroups(plan.cluster))
}

// exhaustivePickInGroups picks clusters inside the chosen groups and reports whether
// they satisfy the cluster constraint and the capacity, and if not, which of
// the two is short ("clusters" or "capacity").
func exhaustivePickInGroups(cands []candidate, chosen []topologyGroup, cluster *api.SpreadConstraint, need int64) ([]candidate, bool, string) {
	var picked, pool []candidate
	var poolIdx []int
	for _, g := range chosen {
		picked = append(picked, cands[g.members[0]])
		poolIdx = append(poolIdx, g.members[1:]...)
	}
	sort.Ints(poolIdx) // back to preference order across groups
	for _, i := range poolIdx {
		pool = append(pool, cands[i])
	}
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
	if need >= 0 && !exhaustiveSwapForCapacity(picked[len(chosen):], rest, need-totalCapacity(picked[:len(chosen)])) {
		return nil, false, "capacity"
	}
	return picked, true, ""
}

// exhaustiveSwapForCapacity swaps picks for larger unpicked candidates, from the last
// pick backwards, until the picks hold need replicas. It reports whether they
// do.
func exhaustiveSwapForCapacity(picked, rest []candidate, need int64) bool {
	for k := len(picked) - 1; k >= 0 && totalCapacity(picked) < need; k-- {
		best, bestCap := -1, picked[k].capacity()
		for j := range rest {
			if c := rest[j].capacity(); c > bestCap {
				best, bestCap = j, c
			}
		}
		if best >= 0 {
			picked[k], rest[best] = rest[best], picked[k]
		}
	}
	return totalCapacity(picked) >= need
}
