package scheduler

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// seatsByName runs apportion over name→votes and returns name→seats.
func seatsByName(names []string, votes []int64, seats int32, order tieOrder) map[string]int32 {
	parties := make([]party, len(names))
	for i := range names {
		parties[i] = party{name: names[i], votes: votes[i]}
	}
	new(scratch).apportion(parties, seats, order)
	out := map[string]int32{}
	for _, p := range parties {
		out[p.name] = p.seats
	}
	return out
}

// sequentialWebster is the textbook one-seat-at-a-time method, the
// reference apportion must agree with.
func sequentialWebster(names []string, votes []int64, seats int32, order tieOrder) map[string]int32 {
	got := make([]int32, len(names))
	for s := int32(0); s < seats; s++ {
		best := -1
		for i := range names {
			if votes[i] <= 0 {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			// Compare votes[i]/(2got[i]+1) with votes[best]/(2got[best]+1).
			l := float64(votes[i]) * float64(2*got[best]+1)
			r := float64(votes[best]) * float64(2*got[i]+1)
			switch {
			case l > r:
				best = i
			case l == r && got[i] < got[best]:
				best = i
			case l == r && got[i] == got[best]:
				if (order == namesAscending && names[i] < names[best]) || (order == namesDescending && names[i] > names[best]) {
					best = i
				}
			}
		}
		if best < 0 {
			break
		}
		got[best]++
	}
	out := map[string]int32{}
	for i := range names {
		out[names[i]] = got[i]
	}
	return out
}

func TestApportion(t *testing.T) {
	m := []string{"m1", "m2", "m3", "m4"}
	cases := []struct {
		name  string
		names []string
		votes []int64
		seats int32
		order tieOrder
		want  map[string]int32
	}{
		{"weights 2:1:1:1, 7 replicas", m, []int64{2, 1, 1, 1}, 7, namesAscending,
			map[string]int32{"m1": 3, "m2": 2, "m3": 1, "m4": 1}},
		{"weights 2:1:1:1, 8 replicas", m, []int64{2, 1, 1, 1}, 8, namesAscending,
			map[string]int32{"m1": 3, "m2": 2, "m3": 2, "m4": 1}},
		{"weights 2:1:1:1, 7 replicas, names descending", m, []int64{2, 1, 1, 1}, 7, namesDescending,
			map[string]int32{"m1": 3, "m2": 1, "m3": 1, "m4": 2}},
		{"dynamic 6:8:10, 12 replicas", []string{"a", "b", "c"}, []int64{6, 8, 10}, 12, namesAscending,
			map[string]int32{"a": 3, "b": 4, "c": 5}},
		{"wikipedia Sainte-Laguë example, 8 seats", []string{"A", "B", "C", "D"},
			[]int64{100000, 80000, 30000, 20000}, 8, namesAscending,
			map[string]int32{"A": 3, "B": 3, "C": 1, "D": 1}},
		{"equal weights, odd count: fewer seats then first name", []string{"b", "a"}, []int64{1, 1}, 5, namesAscending,
			map[string]int32{"a": 3, "b": 2}},
		{"zero votes get nothing", []string{"a", "b", "c"}, []int64{0, 3, 1}, 4, namesAscending,
			map[string]int32{"a": 0, "b": 3, "c": 1}},
		{"no votes at all", []string{"a", "b"}, []int64{0, 0}, 4, namesAscending,
			map[string]int32{"a": 0, "b": 0}},
		{"zero seats", []string{"a", "b"}, []int64{1, 2}, 0, namesAscending,
			map[string]int32{"a": 0, "b": 0}},
		{"fewer seats than parties", []string{"a", "b", "c", "d"}, []int64{1, 1, 1, 1}, 2, namesDescending,
			map[string]int32{"a": 0, "b": 0, "c": 1, "d": 1}},
		{"huge weights do not overflow", []string{"a", "b", "c"},
			[]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64 / 2}, 5, namesAscending,
			map[string]int32{"a": 2, "b": 2, "c": 1}},
		{"million replicas", []string{"a", "b"}, []int64{1, 2}, 1000000, namesAscending,
			map[string]int32{"a": 333333, "b": 666667}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := seatsByName(tc.names, tc.votes, tc.seats, tc.order)
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("apportion (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApportionMatchesSequential compares the arithmetic method with the
// one-seat-at-a-time definition over many small deterministic inputs,
// including ties and parties without votes.
func TestApportionMatchesSequential(t *testing.T) {
	state := uint64(1)
	next := func(n int) int {
		state = state*6364136223846793005 + 1442695040888963407
		return int((state >> 33) % uint64(n))
	}
	for round := 0; round < 3000; round++ {
		n := 1 + next(8)
		names := make([]string, n)
		votes := make([]int64, n)
		for i := range names {
			names[i] = fmt.Sprintf("c%02d", next(50)*100+i)
			votes[i] = int64(next(7)) // small values make ties frequent
			if next(5) == 0 {
				votes[i] = int64(next(1000))
			}
		}
		seats := int32(next(60))
		order := tieOrder(next(2) == 1)
		want := sequentialWebster(names, votes, seats, order)
		got := seatsByName(names, votes, seats, order)
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d votes %v seats %d order %v (-sequential +apportion):\n%s",
				round, votes, seats, order, diff)
		}
	}
}

// TestApportionMatchesSequentialAtScale compares the two with hundreds of
// parties, where the slots between the bounds are ranked by selection rather
// than by a final sort, with quotas far below one seat (most parties get
// none), near one, and far above.
func TestApportionMatchesSequentialAtScale(t *testing.T) {
	state := uint64(7)
	next := func(n int) int {
		state = state*6364136223846793005 + 1442695040888963407
		return int((state >> 33) % uint64(n))
	}
	for round := 0; round < 120; round++ {
		n := 20 + next(400)
		names := make([]string, n)
		votes := make([]int64, n)
		for i := range names {
			names[i] = fmt.Sprintf("member-%04d", next(10000))
			switch next(3) {
			case 0:
				votes[i] = int64(next(5)) // ties and parties without votes
			case 1:
				votes[i] = int64(next(100))
			default:
				votes[i] = int64(next(1_000_000))
			}
			if round%2 == 0 {
				votes[i] = int64(next(6)) // ties at the last seat, at every size
			}
		}
		seats := []int32{int32(1 + next(n/4+1)), int32(n + next(n)), int32(10 * n)}[round/2%3]
		order := tieOrder(next(2) == 1)
		want := sequentialWebster(names, votes, seats, order)
		got := seatsByName(names, votes, seats, order)
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d: %d parties, seats %d, order %v (-sequential +apportion):\n%s",
				round, n, seats, order, diff)
		}
	}
}

// TestApportionIsHouseMonotone checks that adding a seat never takes one
// away, which is what lets static weights ignore the previous result.
func TestApportionIsHouseMonotone(t *testing.T) {
	names := []string{"southcentralus", "westus", "eastus2"}
	votes := []int64{170, 110, 60}
	prev := seatsByName(names, votes, 0, namesAscending)
	for s := int32(1); s <= 200; s++ {
		cur := seatsByName(names, votes, s, namesAscending)
		for _, n := range names {
			if cur[n] < prev[n] {
				t.Fatalf("seats %d: %s fell from %d to %d", s, n, prev[n], cur[n])
			}
		}
		prev = cur
	}
}

// TestTieOrderFor follows Karmada's tieBreakerByUID
// (pkg/util/helper/binding.go): no UID means names ascending; otherwise an
// odd FNV-1a hash of the UID means names descending.
func TestTieOrderFor(t *testing.T) {
	cases := []struct {
		uid  string
		want tieOrder
	}{
		// FNV-1a("") is 0x811c9dc5, odd, yet Karmada checks for an empty UID
		// first and sorts names ascending.
		{"", namesAscending},
		// FNV-1a("a") is 0xe40c292c, even.
		{"a", namesAscending},
		// FNV-1a("b") is 0xe70c2de5, odd.
		{"b", namesDescending},
	}
	for _, tc := range cases {
		if got := tieOrderFor(types.UID(tc.uid)); got != tc.want {
			t.Errorf("tieOrderFor(%q) = %v, want %v", tc.uid, got, tc.want)
		}
	}
}

// TestApportionCostIgnoresReplicas checks that the apportionment allocates
// the same whether it hands out ten seats or a billion.
func TestApportionCostIgnoresReplicas(t *testing.T) {
	parties := make([]party, 500)
	allocs := func(seats int32) float64 {
		return testing.AllocsPerRun(20, func() {
			for i := range parties {
				parties[i] = party{name: fmt.Sprintf("c%03d", i), votes: int64(i%7 + 1)}
			}
			new(scratch).apportion(parties, seats, namesAscending)
		})
	}
	// The names are formatted inside the measured function; subtract them.
	base := testing.AllocsPerRun(20, func() {
		for i := range parties {
			parties[i] = party{name: fmt.Sprintf("c%03d", i), votes: int64(i%7 + 1)}
		}
	})
	few, many := allocs(10)-base, allocs(1_000_000_000)-base
	if few != many || many > 12 {
		t.Errorf("allocations: %v for 10 seats, %v for a billion; want equal and at most 12", few, many)
	}
	var sum int64
	for _, p := range parties {
		sum += int64(p.seats)
	}
	if sum != 1_000_000_000 {
		t.Errorf("seats handed out = %d, want a billion", sum)
	}
}

// TestCoverFirstMatchesSortedPrefix compares coverFirst with sorting every
// item and taking the shortest prefix whose weights reach n, over many
// sizes, weights with ties and zeros, and wants.
func TestCoverFirstMatchesSortedPrefix(t *testing.T) {
	state := uint64(3)
	next := func(n int) int {
		state = state*6364136223846793005 + 1442695040888963407
		return int((state >> 33) % uint64(n))
	}
	for round := 0; round < 2000; round++ {
		size := 1 + next(300)
		weights := make([]int64, size)
		var total int64
		for i := range weights {
			weights[i] = int64(next(4)) * int64(1+next(3)) // zeros and ties
			if next(4) == 0 {
				weights[i] = int64(next(1000))
			}
			total += weights[i]
		}
		n := 1 + int64(next(int(total)+10)) // sometimes more than the total
		before := func(i, j int) bool {
			if weights[i] != weights[j] {
				return weights[i] > weights[j]
			}
			return i < j
		}
		weight := func(i int) int64 { return weights[i] }
		sorted := make([]int, size)
		for i := range sorted {
			sorted[i] = i
		}
		slices.SortStableFunc(sorted, func(i, j int) int { return cmp.Compare(weights[j], weights[i]) })
		want := len(sorted)
		var sum int64
		for k, i := range sorted {
			if sum += weights[i]; sum >= n {
				want = k + 1
				break
			}
		}
		items := make([]int, size)
		for i := range items {
			items[i] = i
		}
		k := coverFirst(items, n, before, weight)
		got := slices.Clone(items[:k])
		slices.Sort(got)
		wantSet := slices.Clone(sorted[:want])
		slices.Sort(wantSet)
		if !slices.Equal(got, wantSet) {
			t.Fatalf("round %d: %d items, n %d: first %d are %v, want %v", round, size, n, k, got, wantSet)
		}
	}
}
