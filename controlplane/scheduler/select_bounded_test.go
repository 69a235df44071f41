package scheduler

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// boundedCase is one selection input for comparing the bounded search with
// the exhaustive one.
type boundedCase struct {
	name  string
	cands []candidate
	plan  spreadPlan
	need  int64
}

// racked builds candidates sorted by preference from (rack, score,
// available) triples.
func racked(specs ...[3]int) []candidate {
	out := make([]candidate, len(specs))
	for i, s := range specs {
		out[i] = scored(apitest.MakeCluster(fmt.Sprintf("c%02d", i)).Label("rack", fmt.Sprintf("r%d", s[0])),
			int64(s[1]), int64(s[2]))
	}
	sortCandidates(out)
	return out
}

func rackSpread(minG, maxG int, cluster ...api.SpreadConstraint) spreadPlan {
	return spread(append([]api.SpreadConstraint{{SpreadByLabel: "rack", MinGroups: minG, MaxGroups: maxG}}, cluster...)...)
}

// randomCase draws a small fleet: up to 9 clusters in up to 5 racks, scores
// of 0 or 100 (locality), capacities of 0 to 30 in steps of 5, a rack constraint, sometimes
// a cluster constraint, and a need from "any" to more than the fleet holds.
func randomCase(r *rand.Rand, i int) boundedCase {
	n := 1 + r.Intn(9)
	racks := 1 + r.Intn(5)
	specs := make([][3]int, n)
	for j := range specs {
		// Few distinct capacities, so that ties in the capacity swap occur.
		specs[j] = [3]int{r.Intn(racks), 100 * r.Intn(2), 5 * r.Intn(7)}
	}
	var cluster []api.SpreadConstraint
	if r.Intn(2) == 0 {
		minC := 1 + r.Intn(5)
		cluster = append(cluster, byField(api.SpreadByFieldCluster, minC, noneOrAtLeast(r, minC, 7)))
	}
	minG := 1 + r.Intn(3)
	need := int64(-1)
	if r.Intn(4) > 0 {
		need = int64(r.Intn(30 * n))
	}
	return boundedCase{
		name:  fmt.Sprintf("random %d", i),
		cands: racked(specs...),
		plan:  rackSpread(minG, noneOrAtLeast(r, minG, 5), cluster...),
		need:  need,
	}
}

// TestSelectByGroupsMatchesExhaustive checks that skipping group counts that
// cannot succeed, the heap in the capacity swap and the pass cap change no
// selection: on small inputs (fewer group counts than maxFailedPasses) the
// bounded search returns exactly the picks, or exactly the error, of the
// exhaustive search it replaced.
func TestSelectByGroupsMatchesExhaustive(t *testing.T) {
	cases := []boundedCase{
		{"local racks first, capacity elsewhere", racked([3]int{0, 100, 5}, [3]int{1, 100, 5}, [3]int{2, 0, 40},
			[3]int{3, 0, 30}, [3]int{4, 0, 1}), rackSpread(2, 0), 60},
		{"more than the fleet holds", racked([3]int{0, 0, 5}, [3]int{1, 0, 5}, [3]int{2, 0, 5}), rackSpread(1, 0), 16},
		{"too few clusters for the cluster constraint", racked([3]int{0, 0, 5}, [3]int{0, 0, 5}, [3]int{1, 0, 5}),
			rackSpread(1, 2, byField(api.SpreadByFieldCluster, 4, 0)), -1},
		{"cluster maxGroups limits what racks give", racked([3]int{0, 100, 1}, [3]int{0, 0, 50}, [3]int{0, 0, 50},
			[3]int{1, 0, 10}, [3]int{2, 0, 10}), rackSpread(1, 3, byField(api.SpreadByFieldCluster, 1, 2)), 60},
		{"fillers swapped for capacity", racked([3]int{0, 100, 1}, [3]int{0, 100, 2}, [3]int{0, 0, 9},
			[3]int{1, 0, 3}, [3]int{1, 0, 9}), rackSpread(2, 2, byField(api.SpreadByFieldCluster, 1, 3)), 20},
	}
	r := rand.New(rand.NewSource(14))
	for i := 0; i < 3000; i++ {
		cases = append(cases, randomCase(r, i))
	}
	mismatches, failures := 0, 0
	for _, tc := range cases {
		want, wantErr := exhaustiveSelectByGroups(tc.cands, tc.plan, tc.need)
		got, gotErr := new(scratch).selectByGroups(tc.cands, tc.plan, tc.need)
		if wantErr != nil {
			failures++
		}
		if capacityOverClusters(tc, wantErr, gotErr) {
			// The exhaustive pass can end on a choice short of clusters
			// although another choice has enough clusters and every
			// choice lacks capacity; the bounded search names capacity,
			// the real shortage. Both refuse.
			continue
		}
		if diff := cmp.Diff(errString(wantErr), errString(gotErr)); diff != "" {
			mismatches++
			t.Errorf("%s (need %d): error (-exhaustive +bounded):\n%s", tc.name, tc.need, diff)
			continue
		}
		if diff := cmp.Diff(names(want), names(got)); diff != "" {
			mismatches++
			t.Errorf("%s (need %d): picks (-exhaustive +bounded):\n%s", tc.name, tc.need, diff)
		}
	}
	// The random inputs must exercise both outcomes, or the comparison
	// proves little.
	if failures == 0 || failures == len(cases) {
		t.Errorf("%d of %d cases failed to select; want a mix", failures, len(cases))
	}
	if mismatches > 0 {
		t.Logf("%d of %d cases differ", mismatches, len(cases))
	}
}

// capacityOverClusters reports whether the exhaustive search blamed the
// cluster count where the bounded one blames capacity, and capacity is
// indeed what no allowed choice of groups has: some choice has enough
// clusters and even the largest cannot hold need.
func capacityOverClusters(tc boundedCase, exhaustive, bounded error) bool {
	if exhaustive == nil || bounded == nil ||
		!strings.HasPrefix(exhaustive.Error(), "the number of clusters in up to") ||
		!strings.HasPrefix(bounded.Error(), "no enough resource") {
		return false
	}
	groups := new(scratch).buildGroups(tc.cands, tc.plan.group, nil)
	hi := maxGroups(tc.plan.group, len(groups))
	b := new(scratch).newGroupBounds(tc.cands, groups, tc.plan.cluster)
	return b.picks(hi, b.groupSize[hi]) >= minGroups(tc.plan.cluster) && b.clusterCap[len(tc.cands)] < tc.need
}

// noneOrAtLeast is 0 (no maxGroups) or a maxGroups from minG to top, as
// validation allows.
func noneOrAtLeast(r *rand.Rand, minG, top int) int {
	if r.Intn(3) == 0 {
		return 0
	}
	return minG + r.Intn(max(top-minG, 1))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
