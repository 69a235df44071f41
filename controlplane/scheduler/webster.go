package scheduler

import (
	"hash/fnv"
	"math"
	"math/bits"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// party is one participant of a Webster (Sainte-Laguë) apportionment: a
// cluster and its weight.
type party struct {
	name  string
	votes int64
	seats int32
}

// tieOrder says how two clusters whose next seats have the same priority are
// ordered after the one with fewer seats: by name ascending, or descending.
// Karmada flips the order per template so that remainders do not always land
// on the alphabetically first cluster across many templates.
type tieOrder bool

const (
	namesAscending  tieOrder = false
	namesDescending tieOrder = true
)

// tieOrderFor derives the name order from the template UID, as Karmada's
// tieBreakerByUID (pkg/util/helper/binding.go) does: ascending when there is
// no UID (preview, Terraform before create), otherwise descending when the
// 32-bit FNV-1a hash of the UID is odd. The empty case must be tested first:
// FNV-1a of the empty string is odd and would reverse the order.
func tieOrderFor(uid types.UID) tieOrder {
	if uid == "" {
		return namesAscending
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return h.Sum32()%2 == 1
}

// apportion gives seats to parties by the Webster/Sainte-Laguë method and
// stores the result in parties[i].seats, which must be zero on entry.
//
// The outcome is exactly that of handing out seats one at a time to the party
// with the highest votes/(2*seats+1), ties going to the party with fewer
// seats and then by name in the given order. Seen whole, seat k (0-based) of
// party i is a slot of priority votes[i]/(2k+1), and the seats go to the
// best slots in slotBefore's order. The priority of the last seat handed out
// lies between total/(2*seats+n) and total/(2*seats-n) for n parties with
// votes, so every slot above the upper bound is held, every slot below the
// lower one is not, and the fewer than 2n+2 slots in between are ranked by
// selection. The work is linear in the number of parties and never depends
// on the number of seats.
//
// Parties without votes get no seats. If no party has votes, nobody gets any.
//
// It works in w's slices; a nil w allocates them.
func (w *scratch) apportion(parties []party, seats int32, order tieOrder) {
	if seats <= 0 || len(parties) == 0 {
		return
	}
	if w == nil {
		w = new(scratch)
	}
	w.votes = reuse(w.votes, len(parties))[:len(parties)]
	votes, total := scaledVotes(parties, w.votes)
	if total == 0 {
		return
	}
	n := uint64(0)
	for _, v := range votes {
		if v > 0 {
			n++
		}
	}
	lo := 2*uint64(seats) + n // threshold total/lo: slots below it are out
	hi := uint64(0)           // threshold total/hi: slots above it are held
	if 2*uint64(seats) > n {
		hi = 2*uint64(seats) - n
	}
	window := reuse(w.slots, int(2*n)+2)
	held := int64(0)
	for i, v := range votes {
		if v == 0 {
			continue
		}
		sure := int64(0)
		if hi > 0 {
			sure = slotsAbove(v, hi, total)
		}
		upto := min(slotsAtLeast(v, lo, total), int64(seats))
		parties[i].seats = int32(sure) // #nosec G115 -- at most seats.
		held += sure
		for k := sure; k < upto; k++ {
			window = append(window, slot{party: int32(i), seat: int32(k)}) // #nosec G115 -- bounded by the party count and seats.
		}
	}
	w.slots = window
	a := apportionment{parties: parties, votes: votes, order: order}
	need := max(0, min(int(int64(seats)-held), len(window)))
	selectBest(window, need, a.before)
	for _, s := range window[:need] {
		parties[s.party].seats++
	}
}

// slot is seat number seat (0-based) of a party.
type slot struct {
	party, seat int32
}

// slotsAtLeast counts the slots of a party with votes v whose priority
// v/(2k+1) is at least total/d: the odd m with m*total <= v*d.
func slotsAtLeast(v, d, total uint64) int64 {
	q, _ := quotient(v, d, total)
	return int64((q + 1) / 2) // #nosec G115 -- q <= d < 2^34.
}

// slotsAbove counts the slots whose priority is above total/d: the odd m
// with m*total < v*d.
func slotsAbove(v, d, total uint64) int64 {
	q, r := quotient(v, d, total)
	if r == 0 {
		return int64(q / 2) // #nosec G115 -- q <= d < 2^34.
	}
	return int64((q + 1) / 2) // #nosec G115 -- q <= d < 2^34.
}

// quotient is v*d/total and its remainder, in 128 bits; v <= total keeps
// the quotient below d.
func quotient(v, d, total uint64) (q, r uint64) {
	hi, lo := bits.Mul64(v, d)
	return bits.Div64(hi, lo, total)
}

// selectBest reorders slots so that its first k are the k best by before, a
// strict total order: a quickselect with median-of-three pivots that sorts
// what is left when partitioning stops shrinking the range fast enough.
func selectBest(slots []slot, k int, before func(x, y slot) bool) {
	l, r := 0, len(slots)
	for budget := 2 * bits.Len(uint(len(slots))); r-l > 12 && k > l && k < r; budget-- {
		if budget == 0 {
			break
		}
		p := partition(slots[l:r], before) + l
		switch {
		case p < k:
			l = p + 1
		case p > k:
			r = p
		default:
			return
		}
	}
	if k > l && k < r {
		slices.SortFunc(slots[l:r], func(x, y slot) int {
			if before(x, y) {
				return -1
			}
			return 1
		})
	}
}

// partition moves a median-of-three pivot to its place in s, better items
// before it and worse after, and returns its index.
func partition[T any](s []T, before func(x, y T) bool) int {
	m, last := len(s)/2, len(s)-1
	if before(s[m], s[0]) {
		s[m], s[0] = s[0], s[m]
	}
	if before(s[last], s[0]) {
		s[last], s[0] = s[0], s[last]
	}
	if before(s[last], s[m]) {
		s[last], s[m] = s[m], s[last]
	}
	s[m], s[last] = s[last], s[m] // the median is the pivot, at the end
	p := 0
	for i := range last {
		if before(s[i], s[last]) {
			s[i], s[p] = s[p], s[i]
			p++
		}
	}
	s[p], s[last] = s[last], s[p]
	return p
}

// scaledVotes returns the votes as unsigned integers in votes (as long as
// parties), shifted right just enough that their sum fits in 64 bits, and
// that sum. Shifting only happens for absurd weights; ratios are kept to 63
// bits of precision.
func scaledVotes(parties []party, votes []uint64) ([]uint64, uint64) {
	for shift := uint(0); ; shift++ {
		var total uint64
		overflow := false
		for i := range parties {
			v := uint64(0)
			if parties[i].votes > 0 {
				v = uint64(parties[i].votes) >> shift
			}
			votes[i] = v
			var carry uint64
			total, carry = bits.Add64(total, v, 0)
			if carry != 0 {
				overflow = true
				break
			}
		}
		if !overflow {
			return votes, total
		}
	}
}

// apportionment holds what slot comparisons read.
type apportionment struct {
	parties []party
	votes   []uint64
	order   tieOrder
}

// slotBefore reports whether seat number ki (0-based) of party i is handed
// out before seat number kj of party j.
func (a *apportionment) slotBefore(i int, ki int32, j int, kj int32) bool {
	// votes[i]/(2ki+1) > votes[j]/(2kj+1), cross-multiplied in 128 bits.
	lh, ll := bits.Mul64(a.votes[i], uint64(2*int64(kj)+1))
	rh, rl := bits.Mul64(a.votes[j], uint64(2*int64(ki)+1))
	if lh != rh {
		return lh > rh
	}
	if ll != rl {
		return ll > rl
	}
	if ki != kj {
		return ki < kj
	}
	if ni, nj := a.parties[i].name, a.parties[j].name; ni != nj {
		return (ni > nj) == (a.order == namesDescending)
	}
	return i < j
}

// before orders two slots, best first.
func (a *apportionment) before(x, y slot) bool {
	if x.party == y.party {
		return x.seat < y.seat
	}
	return a.slotBefore(int(x.party), x.seat, int(y.party), y.seat)
}

// clampInt32 bounds v to the int32 range.
func clampInt32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

// coverFirst reorders items so that the first k of them, for the smallest
// k returned, are the k best by before (a strict total order) and their
// weights sum to at least n; all of them when the whole sum is short. The
// rest follow in no particular order. It is a quickselect that keeps the
// better side while it alone covers what is still wanted, and otherwise
// takes that side whole and goes on in the worse side: linear on average,
// where sorting everything to take a prefix is not (issue 23).
func coverFirst(items []int, n int64, before func(i, j int) bool, weight func(int) int64) int {
	l, r := 0, len(items)
	for budget := 2 * bits.Len(uint(len(items))); r-l > 12 && budget > 0; budget-- {
		p := l + partition(items[l:r], before)
		var better int64
		for _, i := range items[l:p] {
			better += weight(i)
		}
		switch {
		case better >= n:
			r = p
		case better+weight(items[p]) >= n:
			return p + 1
		default:
			n -= better + weight(items[p])
			l = p + 1
		}
	}
	slices.SortFunc(items[l:r], func(i, j int) int {
		if before(i, j) {
			return -1
		}
		return 1
	})
	for k := l; k < r; k++ {
		if n -= weight(items[k]); n <= 0 {
			return k + 1
		}
	}
	return r
}
