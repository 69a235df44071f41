package interpret

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Limits of one call of a customization's script. They are counted, not
// timed, so the same script on the same object always succeeds or fails
// the same way, on a loaded CI machine as on a laptop. The wall-clock
// deadline (DefaultCallTimeout) is a last resort behind them, not one of
// them.
const (
	// InstructionBudget is how many steps one call may take (loading the
	// script, requiring kube and the function itself): a Lua VM
	// instruction is one step, and a library function that does work in
	// proportion to its arguments (pattern matching, table.concat,
	// table.insert, table.sort) charges its steps before or while it does
	// it. A status aggregation over a hundred members runs a few tens of
	// thousands.
	InstructionBudget = 2_000_000
	// MemoryBudget caps, in bytes, the strings one call makes when its
	// input is small, and always the strings the running function holds
	// in its registers at once, duplicates counted, since one
	// concatenation joins them all. Every string of trackedString bytes
	// or more that appears in the running frame and was not there one
	// instruction before counts once as made (one read back from a table
	// soon after it was made, recentStrings, is not made again), so
	// strings kept in tables count when they are made. Smaller ones are
	// bounded by the instruction budget. The elements of a table of
	// bigTable elements or more count too, elementSize bytes each, as the
	// table gains them. A library function that builds a string (rep,
	// format, gsub, table.concat) checks the size against what is left
	// before it builds. What a call may make grows with its input
	// (madeAllowance), and what it keeps is then weighed by walks
	// (lua_held.go); what it may hold in its registers at once does not
	// grow.
	MemoryBudget = 32 << 20
	// MadeCeiling is the most a call may make, however large its input:
	// a status aggregation over thousands of members reaches it. What a
	// call keeps is bounded apart from it (lua_held.go).
	MadeCeiling = 1 << 30
	// ConversionBudget caps the values (tables, entries and scalars) of a
	// call's result, or of a table a kube helper reads, counted as they
	// are converted to Go: a table reached twice counts twice, as it is
	// copied twice.
	ConversionBudget = 1 << 20
	// DefaultCallTimeout is the wall-clock deadline of one call (see
	// WithCallTimeout).
	DefaultCallTimeout = time.Second
	// callStackSize bounds recursion depth.
	callStackSize = 200
	// registrySize and registryMaxSize bound the value stack, which grows
	// registryGrowStep values at a time (gopher-lua's 32 copied the
	// stack 2,000 times on the way to its cap: a gigabyte for one
	// unpack of a long range).
	registrySize     = 1024
	registryMaxSize  = 64 * 1024
	registryGrowStep = 4096
	// trackedString is the smallest string MemoryBudget counts.
	trackedString = 16
	// maxArrayIndex is the largest index kept in a table's array part;
	// larger ones go to its hash part. gopher-lua fills the gap up to an
	// array index with nils in one instruction (t[60000000] = 1 made 1 GB
	// and took seconds); past this bound one instruction makes 32 MiB at
	// most. A script cannot build a sequence this long within its steps
	// from anything an apiserver stores.
	maxArrayIndex = 1 << 21
	// bigTable is the array length from which a table's elements count
	// against MemoryBudget (16 bytes each), once per table, as they
	// appear.
	bigTable = 1024
	// elementSize is what one array element takes.
	elementSize = 16
	// recentStrings is how many of the last strings of recentString
	// bytes or more counted as made are remembered, so that one read back
	// from the table it was stored in (an aggregation appending each
	// member's message to the message so far reads the last one back) is
	// not counted a second time.
	recentStrings = 8
	recentString  = 1 << 10
	// maxTimeoutScale bounds how many times the deadline of a call
	// with a large input (callTimeout) is the caller's.
	maxTimeoutScale = 16
	// valueSize is what madeAllowance counts for each value of a call's
	// arguments, besides the bytes of its strings and keys.
	valueSize = 8
	// clockEvery is how many steps run between two readings of the clock
	// (one reading costs about as much as one instruction).
	clockEvery = 256
)

// gopher-lua keeps its array bound in a package variable; the interpreter
// is its only user in the binary, and sets it once, before any state
// exists.
func init() { lua.MaxArrayIndex = maxArrayIndex }

// budget is the context the VM polls before every instruction: it counts
// steps and the bytes of the strings the script makes, and reports itself
// done once either runs out or the deadline passed. The clock is read
// every clockEvery steps only, and decides nothing a counted budget
// decides first.
type budget struct {
	L    *lua.LState
	left int
	// made is the bytes of strings made so far; prev and cur are the
	// tracked strings of the running frame at the previous instruction
	// and at this one.
	made      int
	prev, cur []lua.LString
	// allowed is how many bytes of strings the call may make
	// (madeAllowance), object the object it runs on, for messages.
	allowed int
	object  string
	// keep is what the call may keep reachable (heldAllowance), walked
	// once made reaches nextWalk, then every walkStep.
	keep, nextWalk, walkStep int
	// recent are the last strings of recentString bytes or more counted
	// in made, next the slot the next one takes.
	recent [recentStrings]lua.LString
	next   int
	// tables holds the array length each table of bigTable elements or
	// more had when last seen; their growth counts in made.
	tables    map[*lua.LTable]int
	lastTable *lua.LTable
	lastN     int
	// deadline is when the call is stopped; zero for none. tick counts
	// down the steps to the next reading of the clock.
	deadline time.Time
	tick     int
	done     chan struct{}
	err      error
}

func newBudget(timeout time.Duration) *budget {
	done := make(chan struct{})
	close(done)
	b := &budget{left: InstructionBudget, done: done, tick: clockEvery}
	b.size(MemoryBudget, 0)
	if timeout > 0 {
		b.deadline = time.Now().Add(timeout)
	}
	return b
}

// Deadline reports the call's deadline.
func (b *budget) Deadline() (time.Time, bool) { return b.deadline, !b.deadline.IsZero() }

// Value carries nothing.
func (b *budget) Value(any) any { return nil }

// Err says which budget ran out.
func (b *budget) Err() error { return b.err }

// Done is polled by the VM before each instruction; a nil channel lets the
// instruction run, the closed one stops the script.
func (b *budget) Done() <-chan struct{} {
	if b.charge(1) != nil {
		return b.done
	}
	made, held := b.account()
	switch {
	case made > b.allowed:
		b.err = fmt.Errorf("%w: strings of more than %d bytes made%s", errBudget, b.allowed, b.on())
	case held > MemoryBudget:
		b.err = fmt.Errorf("%w: strings of more than %d bytes held at once%s", errBudget, MemoryBudget, b.on())
	case made >= b.nextWalk:
		b.nextWalk = made + b.walkStep
		if kept(b.L, b.keep) <= b.keep {
			return nil
		}
		b.err = fmt.Errorf("%w: more than %d bytes of strings and tables kept%s", errBudget, b.keep, b.on())
	default:
		return nil
	}
	return b.done
}

// size sets what the call may make and keep: allowed bytes of strings
// made (madeAllowance), and what heldAllowance grants an input of
// inputBytes, checked from MemoryBudget made on.
func (b *budget) size(allowed, inputBytes int) {
	b.allowed = allowed
	b.keep = heldAllowance(inputBytes)
	b.nextWalk = MemoryBudget
	b.walkStep = max(MemoryBudget, allowed/heldEvery)
}

// charge takes n steps from the budget and reads the clock once every
// clockEvery steps; it returns the error once either ran out.
func (b *budget) charge(n int) error {
	if b.err != nil {
		return b.err
	}
	b.left -= n
	if b.left < 0 {
		b.err = fmt.Errorf("%w: more than %d instructions%s", errBudget, InstructionBudget, b.on())
		return b.err
	}
	if b.tick -= n; b.tick <= 0 {
		b.tick = clockEvery
		if !b.deadline.IsZero() && time.Now().After(b.deadline) {
			b.err = fmt.Errorf("%w: still running after the call's deadline%s", errBudget, b.on())
		}
	}
	return b.err
}

// on names the object the call runs on, for a budget's error.
func (b *budget) on() string {
	if b.object == "" {
		return ""
	}
	return " on " + b.object
}

// room is how many bytes a string a library function builds may take:
// what is left to make, and never more than may be held at once.
func (b *budget) room() int { return max(min(b.allowed-b.made, MemoryBudget), 0) }

// exhaust records that a library function was refused what it needed and
// raises the error in the script.
func (b *budget) exhaust(L *lua.LState, format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("%w: "+format+"%s", append(append([]any{errBudget}, args...), b.on())...)
	}
	L.RaiseError("%v", b.err)
}

// check raises the budget's error, if any, in the script.
func (b *budget) check(L *lua.LState) {
	if b.err != nil {
		L.RaiseError("%v", b.err)
	}
}

// budgetOf is the budget of the call L runs.
func budgetOf(L *lua.LState) *budget { return L.Context().(*budget) }

// account adds the strings that appeared in the running frame since the
// previous instruction to what the call made, and returns the total and
// the bytes of the strings the frame holds now. A new string lands in a
// register of the running frame whatever makes it (a concatenation, a
// library function), so each is seen once; one passed to or returned from
// a function is already in the previous frame's registers and is not
// counted again. Strings are told apart by identity, not content: two
// strings equal byte for byte were made twice, and comparing contents
// would cost a long string's length at every instruction.
func (b *budget) account() (made, held int) {
	b.cur = b.cur[:0]
	for i := 1; i <= b.L.GetTop(); i++ {
		v := b.L.Get(i)
		if t, ok := v.(*lua.LTable); ok {
			b.accountTable(t)
			continue
		}
		s, ok := v.(lua.LString)
		if !ok {
			continue
		}
		held += len(s)
		if len(s) < trackedString {
			continue
		}
		b.cur = append(b.cur, s)
		if !slices.ContainsFunc(b.prev, func(p lua.LString) bool { return sameString(p, s) }) {
			b.made += b.cost(s)
		}
	}
	b.prev, b.cur = b.cur, b.prev
	return b.made, held
}

// cost is what a string that appeared in the running frame adds to made:
// its length, or nothing for a long string made recently and read back.
func (b *budget) cost(s lua.LString) int {
	if len(s) < recentString {
		return len(s)
	}
	if slices.ContainsFunc(b.recent[:], func(p lua.LString) bool { return sameString(p, s) }) {
		return 0
	}
	b.recent[b.next] = s
	b.next = (b.next + 1) % recentStrings
	return len(s)
}

// sameString reports whether a and b are the same string in memory.
func sameString(a, b lua.LString) bool {
	return len(a) == len(b) && unsafe.StringData(string(a)) == unsafe.StringData(string(b))
}

// accountTable counts in made the elements a big table gained since it
// was last seen (all of them the first time). A table gains elements in a
// register of the running frame (it is in one when an instruction sets an
// element), so a gap filled in one instruction is seen at the next.
// MaxN is quick unless the array ends in nils.
func (b *budget) accountTable(t *lua.LTable) {
	n := t.MaxN()
	if n < bigTable || (t == b.lastTable && n == b.lastN) {
		return
	}
	// A loop over a big table sees it at every instruction: the last one
	// seen is remembered without a map lookup.
	b.lastTable, b.lastN = t, n
	if b.tables == nil {
		b.tables = map[*lua.LTable]int{}
	}
	if grown := n - b.tables[t]; grown > 0 {
		b.made += grown * elementSize
		b.tables[t] = n
	}
}

// madeAllowance is how many bytes of strings a call whose arguments take
// size bytes (inputSize) may make, members being the length of the list
// among them (statusItems; 1 for none): MemoryBudget, and as many bytes
// as the whole input once per member, at most MadeCeiling. A script that
// builds one message per member and appends it to the messages so far
// makes strings that grow as the square of the members: a few hundred
// megabytes at 2,000 members, all but the last of them garbage at once.
// A fixed allowance fails such a script at a fleet size, however large it
// is set; this one grows as the script's strings do, so a script that
// appends, per member, no more than the members' whole input passes at
// any fleet size up to the ceiling. A runaway script is stopped as before:
// endless concatenation by what may be held at once (which does not grow),
// a table growing forever by the instructions, a library bomb by room.
// What it may keep is bounded apart, by walks (lua_held.go).
func madeAllowance(size, members int) int {
	extra := int64(size) * int64(max(members, 1))
	return int(min(MemoryBudget+extra, MadeCeiling))
}

// inputSize is what a call's arguments take, as madeAllowance counts it:
// the bytes of their strings and keys and valueSize for each value.
func inputSize(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := valueSize
		for k, e := range x {
			n += len(k) + inputSize(e)
		}
		return n
	case []any:
		n := valueSize
		for _, e := range x {
			n += inputSize(e)
		}
		return n
	case string:
		return valueSize + len(x)
	}
	return valueSize
}

// callTimeout is the deadline of a call that may make allowed bytes: the
// caller's timeout, longer in proportion for a call whose input lets it
// make more than MemoryBudget, since making them takes longer, at most
// maxTimeoutScale times.
func callTimeout(timeout time.Duration, allowed int) time.Duration {
	if timeout <= 0 || allowed <= MemoryBudget {
		return timeout
	}
	return timeout * time.Duration(min(allowed, maxTimeoutScale*MemoryBudget)) / MemoryBudget
}
