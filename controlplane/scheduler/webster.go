package scheduler

import (
	"hash/fnv"
	"math"
	"math/bits"

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
// seats and then by name in the given order. It is computed without one step
// per seat: every party starts from its rounded quota, the sum is brought to
// the target with a few heap moves, and seats are then exchanged while some
// party's next seat outranks another party's last one. The work depends on
// the number of parties only, never on the number of seats.
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
	a := apportionment{parties: parties, votes: votes, order: order}

	var sum int64
	for i := range parties {
		if votes[i] == 0 {
			continue
		}
		s := roundedQuota(uint64(seats), votes[i], total)
		parties[i].seats = int32(s) // #nosec G115 -- bounded by seats.
		sum += int64(s)
	}

	next := a.newHeap(&w.heaps[0], a.nextBefore)
	last := a.newHeap(&w.heaps[1], a.lastAfter)
	for ; sum < int64(seats); sum++ {
		a.move(next.top(), -1, next, last)
	}
	for ; sum > int64(seats); sum-- {
		a.move(-1, last.top(), next, last)
	}
	// Exchange while the best unheld seat outranks the worst held one. Each
	// exchange strictly improves the held set, so the loop ends.
	for {
		i, j := next.top(), last.top()
		if i < 0 || j < 0 || parties[j].seats == 0 || i == j {
			return
		}
		if !a.slotBefore(i, parties[i].seats, j, parties[j].seats-1) {
			return
		}
		a.move(i, j, next, last)
	}
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

// roundedQuota is seats*votes/total rounded half up, computed in 128 bits.
func roundedQuota(seats, votes, total uint64) uint64 {
	hi, lo := bits.Mul64(seats, votes)
	q, r := bits.Div64(hi, lo, total) // q <= seats, so hi < total.
	if r >= total-r {
		q++
	}
	return q
}

// apportionment holds the state shared by the heap orderings.
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
	if a.order == namesDescending {
		return a.parties[i].name > a.parties[j].name
	}
	return a.parties[i].name < a.parties[j].name
}

// nextBefore orders parties by their next seat, best first.
func (a *apportionment) nextBefore(i, j int) bool {
	return a.slotBefore(i, a.parties[i].seats, j, a.parties[j].seats)
}

// lastAfter orders parties by their last held seat, worst first. Parties
// holding no seat sink to the bottom.
func (a *apportionment) lastAfter(i, j int) bool {
	si, sj := a.parties[i].seats, a.parties[j].seats
	if si == 0 || sj == 0 {
		return si != 0 && sj == 0
	}
	return a.slotBefore(j, sj-1, i, si-1)
}

// move gives one seat to party add and takes one from party take; either may
// be -1. Both heaps are repaired.
func (a *apportionment) move(add, take int, next, last *indexHeap) {
	if add >= 0 {
		a.parties[add].seats++
		next.fix(add)
		last.fix(add)
	}
	if take >= 0 {
		a.parties[take].seats--
		next.fix(take)
		last.fix(take)
	}
}

// newHeap builds, in h and its slices, an indexed heap over the parties
// that have votes.
func (a *apportionment) newHeap(h *indexHeap, before func(i, j int) bool) *indexHeap {
	h.before = before
	h.pos = reuse(h.pos, len(a.parties))[:len(a.parties)]
	h.items = reuse(h.items, len(a.parties))
	for i := range a.parties {
		if a.votes[i] == 0 {
			h.pos[i] = -1
			continue
		}
		h.pos[i] = int32(len(h.items)) // #nosec G115 -- party count fits.
		h.items = append(h.items, int32(i))
	}
	for k := len(h.items)/2 - 1; k >= 0; k-- {
		h.down(k)
	}
	return h
}

// indexHeap is a binary heap of party indices that can re-sort one party in
// place after its key changed.
type indexHeap struct {
	items  []int32
	pos    []int32
	before func(i, j int) bool
}

func (h *indexHeap) top() int {
	if len(h.items) == 0 {
		return -1
	}
	return int(h.items[0])
}

func (h *indexHeap) fix(party int) {
	k := int(h.pos[party])
	if k < 0 {
		return
	}
	if !h.down(k) {
		h.up(k)
	}
}

func (h *indexHeap) less(a, b int) bool {
	return h.before(int(h.items[a]), int(h.items[b]))
}

func (h *indexHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]] = int32(a) // #nosec G115 -- heap size fits.
	h.pos[h.items[b]] = int32(b) // #nosec G115 -- heap size fits.
}

func (h *indexHeap) up(k int) {
	for k > 0 {
		p := (k - 1) / 2
		if !h.less(k, p) {
			return
		}
		h.swap(k, p)
		k = p
	}
}

func (h *indexHeap) down(k int) bool {
	start, n := k, len(h.items)
	for {
		l := 2*k + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, k) {
			break
		}
		h.swap(k, c)
		k = c
	}
	return k > start
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
