package scheduler

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// nameRanks is the static part of the spread selection's order: each
// cluster's position when the Snapshot's clusters are sorted by name. It
// is computed once per Snapshot, by the first decision that spreads, so a
// decision orders its candidates by packing (tier, score, capacity, rank)
// into one integer and sorting those by radix in linear time instead of
// comparing candidates n log n times (issue 23).
type nameRanks struct {
	once sync.Once
	// rank is each cluster's position in name order; nil when two
	// clusters share a name, which the comparison sort leaves to chance
	// and the ranks could not reproduce.
	rank []int32
	// order is the clusters' indices in name order; nil with rank.
	order []int32
	// bits is how many bits a rank needs.
	bits int
}

// ranks returns the clusters' name ranks and the bits a rank needs, or nil
// when names repeat.
func (s *Snapshot) ranks() ([]int32, int) {
	s.names.once.Do(func() {
		order := make([]int32, len(s.facts))
		for i := range order {
			order[i] = int32(i) // #nosec G115 -- a fleet has fewer than 2^31 clusters.
		}
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(s.facts[a].name, s.facts[b].name) })
		rank := make([]int32, len(order))
		for r, i := range order {
			if r > 0 && s.facts[order[r-1]].name == s.facts[i].name {
				return
			}
			rank[i] = int32(r) // #nosec G115 -- as above.
		}
		s.names.rank, s.names.order, s.names.bits = rank, order, bits.Len(uint(len(order)))
	})
	return s.names.rank, s.names.bits
}

// sortByRanks orders candidates exactly as sortCandidates does: earlier
// tier, higher score, more capacity, then name, here the name's rank among
// the Snapshot's clusters (rank, indexed by cluster, needs rankBits bits).
// It returns the sorted candidates in w's slices, or false when the four
// keys do not fit into 64 bits together, and the caller must sort.
func (w *scratch) sortByRanks(cands []candidate, rank []int32, rankBits int) ([]candidate, bool) {
	if len(cands) == 0 {
		return cands, true
	}
	maxTier := 0
	minScore, maxScore := cands[0].score, cands[0].score
	minCap, maxCap := cands[0].capacity(), cands[0].capacity()
	for i := range cands {
		c := &cands[i]
		if c.tier < 0 {
			return nil, false
		}
		maxTier = max(maxTier, c.tier)
		minScore, maxScore = min(minScore, c.score), max(maxScore, c.score)
		minCap, maxCap = min(minCap, c.capacity()), max(maxCap, c.capacity())
	}
	scoreSpan, capSpan := maxScore-minScore, maxCap-minCap
	if scoreSpan < 0 || capSpan < 0 { // overflowed
		return nil, false
	}
	tierBits, scoreBits, capBits := bits.Len(uint(maxTier)), bits.Len64(uint64(scoreSpan)), bits.Len64(uint64(capSpan))
	if tierBits+scoreBits+capBits+rankBits > 64 {
		return nil, false
	}
	keys := reuse(w.keys, len(cands))[:len(cands)]
	w.at = reuse(w.at, len(rank))[:len(rank)]
	for k := range cands {
		c := &cands[k]
		r := rank[c.index]
		w.at[r] = int32(k)                               // #nosec G115 -- fewer candidates than clusters.
		key := uint64(c.tier)                            // #nosec G115 -- not negative.
		key = key<<scoreBits | uint64(maxScore-c.score)  // #nosec G115 -- in [0, scoreSpan].
		key = key<<capBits | uint64(maxCap-c.capacity()) // #nosec G115 -- in [0, capSpan].
		keys[k] = key<<rankBits | uint64(r)              // #nosec G115 -- a rank is not negative.
	}
	w.keys, w.tmpKeys = keys, reuse(w.tmpKeys, len(keys))[:len(keys)]
	radixSort(keys, w.tmpKeys)
	sorted := reuse(w.sorted, len(cands))
	mask := uint64(1)<<rankBits - 1
	for _, key := range keys {
		sorted = append(sorted, cands[w.at[key&mask]])
	}
	w.sorted = sorted
	return sorted, true
}

// radixSort sorts keys in ascending order, least significant byte first,
// skipping the bytes in which all keys agree; tmp is as long as keys.
func radixSort(keys, tmp []uint64) {
	and, or := ^uint64(0), uint64(0)
	for _, k := range keys {
		and &= k
		or |= k
	}
	differ := and ^ or
	src, dst := keys, tmp
	for shift := 0; shift < 64; shift += 8 {
		if (differ>>shift)&0xff == 0 {
			continue
		}
		var start [256]int
		for _, k := range src {
			start[(k>>shift)&0xff]++
		}
		sum := 0
		for b, n := range start {
			start[b] = sum
			sum += n
		}
		for _, k := range src {
			b := (k >> shift) & 0xff
			dst[start[b]] = k
			start[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
