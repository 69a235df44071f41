package scheduler

import "sync"

// scratch holds the slices one decision works in and throws away: the
// candidates, the rejections, the picks of spread selection, the group
// members and bounds, the Webster parties. At thousands of clusters a
// decision needed over a megabyte of them, and collecting that garbage
// cost a quarter of the decision (issue 23); a pool hands each decision
// the slices an earlier one grew instead.
//
// A scratch belongs to one decision at a time: schedule takes one from
// scratchPool and puts it back when the decision is made, so concurrent
// decisions, on one Snapshot or not, never share one. Nothing a decision
// returns refers to a scratch: results and errors are built from fresh
// slices and maps.
//
// A nil *scratch is valid and allocates every slice, as the table tests
// of the stages use it.
type scratch struct {
	cands    []candidate
	rejected []rejection
	left     []rejection

	// sorted, keys, tmpKeys and at serve sortByRanks.
	sorted        []candidate
	keys, tmpKeys []uint64
	at            []int32

	picked, pool []candidate
	heapIdx      []int
	groupOf      []int32
	groupPos     []int32
	members      []int
	groupState   []uint8
	caps, sums   []int64

	parties []party
	order   []int
	result  []int32
	votes   []uint64
	slots   []slot

	// marks flags, per cluster of the Snapshot, what leftOut needs.
	marks []uint8

	// taintWhy and apiWhy remember the rejection reasons of this decision,
	// so that clusters rejected for the same taint or the same missing API
	// share one string instead of formatting their own.
	taintWhy map[taintReason]string
	apiWhy   [apiNothingCollected + 1]string
}

// taintReason is what the reason a taint rejects a cluster depends on.
type taintReason struct {
	key, value, effect string
	expired            bool
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch takes a scratch for one decision; release gives it back.
func getScratch() *scratch {
	w := scratchPool.Get().(*scratch)
	clear(w.taintWhy)
	w.apiWhy = [len(w.apiWhy)]string{}
	return w
}

func (w *scratch) release() { scratchPool.Put(w) }

// reuse returns buf emptied with room for n elements, growing it when it is
// too small; the caller stores the slice back to keep what it grew.
func reuse[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, 0, n)
	}
	return buf[:0]
}

// zeroed is reuse with the n elements present and zero.
func zeroed[T any](buf []T, n int) []T {
	buf = reuse(buf, n)[:n]
	clear(buf)
	return buf
}

// taintWhyOf is the reason already formatted for the taint, if any.
func (w *scratch) taintWhyOf(key taintReason) (string, bool) {
	if w == nil {
		return "", false
	}
	why, ok := w.taintWhy[key]
	return why, ok
}
