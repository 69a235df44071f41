package scheduler

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestSortByRanksMatchesComparison checks that the radix order over a
// Snapshot's name ranks is exactly sortCandidates' order, ties included,
// on random candidates whose tiers, scores and capacities collide often
// and on ones whose capacities span the whole int32 range.
func TestSortByRanksMatchesComparison(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	for round := range 400 {
		n := 1 + r.Intn(300)
		clusters := make([]*api.Cluster, n)
		for i := range clusters {
			// Names in an order unrelated to the index.
			clusters[i] = apitest.MakeCluster(fmt.Sprintf("m%04d", r.Intn(10000)*n+i)).Obj()
		}
		snap := NewSnapshot(clusters)
		rank, rankBits := snap.ranks()
		if rank == nil {
			t.Fatalf("round %d: unique names reported as repeated", round)
		}
		var cands []candidate
		for i, c := range clusters {
			if r.Intn(4) == 0 {
				continue // filtered out
			}
			cand := candidate{cluster: c, clusterName: c.Name, index: int32(i), tier: r.Intn(3),
				score: int64(r.Intn(2) * maxScore), previous: int32(r.Intn(3))}
			switch round % 3 {
			case 0:
				cand.available = int64(r.Intn(5))
			case 1:
				cand.available = int64(r.Intn(2000))
			default:
				cand.available = r.Int63n(math.MaxInt32)
				cand.previous = r.Int31()
			}
			cands = append(cands, cand)
		}
		want := append([]candidate(nil), cands...)
		sortCandidates(want)
		got, ok := new(scratch).sortByRanks(cands, rank, rankBits)
		if !ok {
			t.Fatalf("round %d: keys of %d candidates reported as too wide", round, len(cands))
		}
		if diff := cmp.Diff(names(want), names(got)); diff != "" {
			t.Fatalf("round %d: radix order differs (-comparison +radix):\n%s", round, diff)
		}
	}
}

// TestSortByRanksFallsBack checks the two cases the radix order leaves to
// the comparison sort: repeated names and keys wider than 64 bits.
func TestSortByRanksFallsBack(t *testing.T) {
	twice := NewSnapshot([]*api.Cluster{apitest.MakeCluster("a").Obj(), apitest.MakeCluster("b").Obj(),
		apitest.MakeCluster("a").Obj()})
	if rank, _ := twice.ranks(); rank != nil {
		t.Errorf("ranks of a snapshot naming %q twice = %v, want none", "a", rank)
	}
	clusters := []*api.Cluster{apitest.MakeCluster("a").Obj(), apitest.MakeCluster("b").Obj()}
	rank, rankBits := NewSnapshot(clusters).ranks()
	wide := []candidate{
		{cluster: clusters[0], index: 0, available: math.MaxInt64 / 2, tier: 1 << 20},
		{cluster: clusters[1], index: 1, available: 0, score: math.MinInt64 / 4},
	}
	if _, ok := new(scratch).sortByRanks(wide, rank, rankBits); ok {
		t.Errorf("sortByRanks accepted keys wider than 64 bits")
	}
}

// TestRadixSort checks the radix sort against the obvious order.
func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{1, 2, 3, 255, 256, 1000} {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = r.Uint64() >> uint(r.Intn(64))
		}
		want := append([]uint64(nil), keys...)
		for i := 1; i < len(want); i++ { // insertion sort, the obvious order
			for j := i; j > 0 && want[j] < want[j-1]; j-- {
				want[j], want[j-1] = want[j-1], want[j]
			}
		}
		radixSort(keys, make([]uint64, n))
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("%d keys (-want +got):\n%s", n, diff)
		}
	}
}
