package interpret

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// What a call keeps. Once a call's input lets it make more than
// MemoryBudget (madeAllowance), what it made is no longer a bound on what
// it keeps in tables: an aggregation over 2,000 members makes hundreds of
// megabytes of strings that are garbage at once, and a runaway one may
// keep them. So from MemoryBudget made on, and then every heldEvery of
// its allowance made, the call's reachable values are walked and weighed:
// every frame's registers, the globals, the registry and the upvalues of
// every function reached. More than heldAllowance stops the call. Between
// two walks it can keep no more than it made, so what it keeps is bounded
// by heldAllowance plus one spacing, whatever its allowance of strings
// made.

// heldEvery divides a call's allowance of strings made into the spacings
// between walks, none shorter than MemoryBudget: a call that may make
// MadeCeiling is walked at most every 64 MiB, a few times for a
// well-behaved aggregation at 2,000 members.
const heldEvery = 16

// heldAllowance is what a call whose arguments take size bytes may keep
// reachable at a walk: MemoryBudget of its own, and its input twice over
// (the walk weighs tables by entry where inputSize weighs them by value,
// and a script may copy what it was given).
func heldAllowance(size int) int { return MemoryBudget + 2*size }

// weigher walks reachable values once, counting each string (by identity:
// one string stored in many places is kept once), table and function
// once. It keeps its own list of values to visit rather than recursing, so
// a long chain of nested tables costs no Go stack.
type weigher struct {
	limit   int
	bytes   int
	todo    []lua.LValue
	tables  map[*lua.LTable]struct{}
	funcs   map[*lua.LFunction]struct{}
	strings map[*byte]struct{}
}

// kept weighs what L's running call can reach, stopping as soon as it
// passes limit (the walk of a call that keeps too much is cut short).
func kept(L *lua.LState, limit int) int {
	w := &weigher{limit: limit, tables: map[*lua.LTable]struct{}{}, funcs: map[*lua.LFunction]struct{}{}, strings: map[*byte]struct{}{}}
	// GetLocal names every register of a frame, the temporaries as
	// "(*temporary)", so the frames' registers are all roots.
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		for n := 1; ; n++ {
			name, v := L.GetLocal(dbg, n)
			if name == "" {
				break
			}
			w.todo = append(w.todo, v)
		}
	}
	w.todo = append(w.todo, L.G.Global, L.G.Registry)
	for len(w.todo) > 0 && w.bytes <= w.limit {
		v := w.todo[len(w.todo)-1]
		w.todo = w.todo[:len(w.todo)-1]
		w.visit(v)
	}
	return w.bytes
}

// visit weighs v and lists what it refers to.
func (w *weigher) visit(v lua.LValue) {
	w.bytes += valueSize
	switch x := v.(type) {
	case lua.LString:
		if len(x) == 0 {
			return
		}
		p := unsafe.StringData(string(x))
		if _, seen := w.strings[p]; !seen {
			w.strings[p] = struct{}{}
			w.bytes += len(x)
		}
	case *lua.LTable:
		if _, seen := w.tables[x]; seen {
			return
		}
		w.tables[x] = struct{}{}
		x.ForEach(func(k, e lua.LValue) { w.todo = append(w.todo, k, e) })
	case *lua.LFunction:
		if _, seen := w.funcs[x]; seen {
			return
		}
		w.funcs[x] = struct{}{}
		for _, uv := range x.Upvalues {
			if uv != nil {
				w.todo = append(w.todo, uv.Value())
			}
		}
	}
}
