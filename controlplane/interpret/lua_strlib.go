package interpret

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// This file replaces the library functions that can do unbounded work in
// one call with versions that charge it to the call's budget before (or
// while) they do it: string.find, match, gmatch and gsub run flotilla's
// matcher (lua_pattern.go), whose every step is charged; gsub builds its
// result once and within the memory left; rep, format and table.concat
// compute the size of their result before they build it; table.insert,
// remove and sort charge the elements they move. math.random draws from a
// generator of the call's own, so a script cannot reseed the process's.

// boundLibraries installs the bounded functions in L's libraries.
func boundLibraries(L *lua.LState) {
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	goFormat := str.RawGetString("format")
	L.SetFuncs(str, map[string]lua.LGFunction{
		"find":  func(L *lua.LState) int { return strFind(L, true) },
		"match": func(L *lua.LState) int { return strFind(L, false) },
		"gsub":  strGsub,
		"rep":   strRep,
		"format": func(L *lua.LState) int {
			checkFormat(L)
			return callThrough(L, goFormat)
		},
	})
	str.RawSetString("gmatch", L.NewFunction(strGmatch))
	str.RawSetString("gfind", str.RawGetString("gmatch"))

	tab := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	insert, remove, sort := tab.RawGetString("insert"), tab.RawGetString("remove"), tab.RawGetString("sort")
	L.SetFuncs(tab, map[string]lua.LGFunction{
		"concat": tabConcat,
		"insert": func(L *lua.LState) int {
			// Inserting at pos moves the elements after it; at a
			// position past the end, fills the gap.
			n := L.CheckTable(1).Len()
			if L.GetTop() >= 3 {
				pos := L.CheckInt(2)
				chargeSteps(L, "table.insert", max(n-pos, 0)+max(pos-n, 0))
			}
			return callThrough(L, insert)
		},
		"remove": func(L *lua.LState) int {
			n := L.CheckTable(1).Len()
			chargeSteps(L, "table.remove", max(n-L.OptInt(2, n), 0))
			return callThrough(L, remove)
		},
		"sort": func(L *lua.LState) int {
			n := L.CheckTable(1).Len()
			chargeSteps(L, "table.sort", n*bits.Len(uint(n)))
			return callThrough(L, sort)
		},
	})

	// tonumber reads all of a long string: its work is charged.
	tonumber := L.GetGlobal("tonumber")
	L.SetGlobal("tonumber", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok {
			chargeSteps(L, "tonumber", len(s)/64)
		}
		return callThrough(L, tonumber)
	}))

	rng := rand.New(rand.NewPCG(0, 0))
	L.SetFuncs(L.GetGlobal(lua.MathLibName).(*lua.LTable), map[string]lua.LGFunction{
		"random": func(L *lua.LState) int {
			lo, hi := 1, 0
			switch L.GetTop() {
			case 0:
				L.Push(lua.LNumber(rng.Float64()))
				return 1
			case 1:
				hi = L.CheckInt(1)
			default:
				lo, hi = L.CheckInt(1), L.CheckInt(2)
			}
			if lo > hi {
				L.ArgError(L.GetTop(), "interval is empty")
			}
			L.Push(lua.LNumber(lo + rng.IntN(hi-lo+1)))
			return 1
		},
		"randomseed": func(L *lua.LState) int {
			rng = rand.New(rand.NewPCG(uint64(L.CheckInt64(1)), 0))
			return 0
		},
	})
}

// chargeSteps charges n steps of fn's work to the call's budget, and
// raises its error once it ran out.
func chargeSteps(L *lua.LState, fn string, n int) {
	b := budgetOf(L)
	if b.charge(n) != nil {
		L.RaiseError("%v (in %s)", b.err, fn)
	}
}

// callThrough calls fn with the arguments of the running Go function and
// returns its results.
func callThrough(L *lua.LState, fn lua.LValue) int {
	n := L.GetTop()
	args := make([]lua.LValue, n)
	for i := range args {
		args[i] = L.Get(i + 1)
	}
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	L.Call(n, lua.MultRet)
	return L.GetTop() - n
}

// newMatcher matches pattern against s and charges its steps to L's
// budget.
func newMatcher(L *lua.LState, s, pattern string) *matcher {
	return &matcher{src: s, pat: pattern, charge: budgetOf(L).charge}
}

// raiseMatch raises a matcher's error in the script.
func raiseMatch(L *lua.LState, fn string, err error) {
	if errors.Is(err, errBudget) {
		L.RaiseError("%v (in string.%s)", err, fn)
	}
	L.RaiseError("%s", err)
}

// pushCaptures pushes a match's captures and returns how many.
func pushCaptures(L *lua.LState, caps []patCaptured) int {
	for _, c := range caps {
		if c.isPos {
			L.Push(lua.LNumber(c.pos))
		} else {
			L.Push(lua.LString(c.str))
		}
	}
	return len(caps)
}

// strFind is string.find (find) and string.match, as Lua 5.1's
// str_find_aux.
func strFind(L *lua.LState, find bool) int {
	s, p := L.CheckString(1), L.CheckString(2)
	init := L.OptInt(3, 1)
	if init < 0 {
		init += len(s) + 1
	}
	init = min(max(init-1, 0), len(s))
	if find && (lua.LVAsBool(L.Get(4)) || !strings.ContainsAny(p, patSpecials)) {
		chargeSteps(L, "string.find", (len(s)-init)/64)
		if i := strings.Index(s[init:], p); i >= 0 {
			L.Push(lua.LNumber(init + i + 1))
			L.Push(lua.LNumber(init + i + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	m := newMatcher(L, s, p)
	start := 0
	anchor := len(p) > 0 && p[0] == '^'
	if anchor {
		start = 1
	}
	var caps []patCaptured
	from, to := -1, -1
	err := m.protect(func() {
		for s1 := init; s1 <= len(s); s1++ {
			if e := m.matchAt(s1, start); e >= 0 {
				from, to = s1, e
				caps = m.captures(s1, e, !find)
				return
			}
			if anchor {
				return
			}
		}
	})
	name := map[bool]string{true: "find", false: "match"}[find]
	if err != nil {
		raiseMatch(L, name, err)
	}
	if from < 0 {
		L.Push(lua.LNil)
		return 1
	}
	if find {
		L.Push(lua.LNumber(from + 1))
		L.Push(lua.LNumber(to))
		return 2 + pushCaptures(L, caps)
	}
	return pushCaptures(L, caps)
}

// strGmatch is string.gmatch: an iterator that finds the next match each
// time it is called, as Lua 5.1's gmatch_aux (a '^' is an ordinary
// character here).
func strGmatch(L *lua.LState) int {
	s, p := L.CheckString(1), L.CheckString(2)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m := newMatcher(L, s, p)
		var caps []patCaptured
		err := m.protect(func() {
			for src := pos; src <= len(s); src++ {
				if e := m.matchAt(src, 0); e >= 0 {
					pos = e
					if e == src {
						pos++
					}
					caps = m.captures(src, e, true)
					return
				}
			}
			pos = len(s) + 1
		})
		if err != nil {
			raiseMatch(L, "gmatch", err)
		}
		return pushCaptures(L, caps)
	}))
	return 1
}

// strGsub is string.gsub, as Lua 5.1's str_gsub: the result is built once,
// and never past the memory the call has left.
func strGsub(L *lua.LState) int {
	src, p := L.CheckString(1), L.CheckString(2)
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LString, lua.LNumber, *lua.LTable, *lua.LFunction:
	default:
		L.ArgError(3, "string/function/table expected")
	}
	maxN := L.OptInt(4, len(src)+1)
	b := budgetOf(L)
	var out strings.Builder
	add := func(s string) {
		if out.Len()+len(s) > b.room() {
			b.exhaust(L, "string.gsub could make more than the %d bytes left", b.room())
		}
		out.WriteString(s)
	}
	start := 0
	anchor := len(p) > 0 && p[0] == '^'
	if anchor {
		start = 1
	}
	m := newMatcher(L, src, p)
	n, s := 0, 0
loop:
	for n < maxN {
		e := -1
		var value lua.LValue
		err := m.protect(func() {
			if e = m.matchAt(s, start); e >= 0 {
				value = gsubValue(L, m, repl, s, e, add)
			}
		})
		if err != nil {
			raiseMatch(L, "gsub", err)
		}
		if e >= 0 {
			n++
			if value != nil {
				addReplacement(L, value, src[s:e], add)
			}
		}
		switch {
		case e > s:
			s = e
		case s < len(src):
			add(src[s : s+1])
			s++
		default:
			break loop
		}
		if anchor {
			break
		}
	}
	add(src[s:])
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(n))
	return 2
}

// gsubValue adds a string replacement for the match from s to e, or
// returns the value a table or function gives for it (looked up or called
// after the matcher is done with the match).
func gsubValue(L *lua.LState, m *matcher, repl lua.LValue, s, e int, add func(string)) lua.LValue {
	switch r := repl.(type) {
	case *lua.LTable:
		c := m.capture1(0, s, e)
		if c.isPos {
			return L.GetTable(r, lua.LNumber(c.pos))
		}
		return L.GetTable(r, lua.LString(c.str))
	case *lua.LFunction:
		L.Push(r)
		nargs := pushCaptures(L, m.captures(s, e, true))
		L.Call(nargs, 1)
		v := L.Get(-1)
		L.Pop(1)
		return v
	}
	r := lua.LVAsString(repl)
	for i := 0; i < len(r); i++ {
		// The text up to the next '%' goes in at once.
		j := strings.IndexByte(r[i:], '%')
		if j < 0 || i+j+1 == len(r) {
			add(r[i:])
			break
		}
		add(r[i : i+j])
		i += j + 1
		switch d := r[i]; {
		case d == '0':
			add(m.src[s:e])
		case '1' <= d && d <= '9':
			c := m.capture1(int(d-'1'), s, e)
			if c.isPos {
				add(lua.LNumber(c.pos).String())
			} else {
				add(c.str)
			}
		default:
			add(r[i : i+1])
		}
	}
	return nil
}

// addReplacement adds what a table or function gave for a match: false or
// nil keep the match.
func addReplacement(L *lua.LState, v lua.LValue, match string, add func(string)) {
	switch {
	case lua.LVIsFalse(v):
		add(match)
	case lua.LVCanConvToString(v):
		add(lua.LVAsString(v))
	default:
		L.RaiseError("invalid replacement value (a %s)", v.Type())
	}
}

// strRep is string.rep, refused before it allocates more than the call's
// memory has left.
func strRep(L *lua.LState) int {
	s, n := L.CheckString(1), L.CheckInt(2)
	if n <= 0 || len(s) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	// Compared by division: the product of two large counts overflows.
	if b := budgetOf(L); n > b.room()/len(s) {
		b.exhaust(L, "string.rep could make %d times %d bytes, more than the %d left", n, len(s), b.room())
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// tabConcat is table.concat, gopher-lua's (positions past the end are
// clamped), with the result's size computed before it is built.
func tabConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	n := t.Len()
	i, j := L.OptInt(3, 1), L.OptInt(4, n)
	if L.GetTop() == 3 && (i > n || i < 1) {
		L.Push(lua.LString(""))
		return 1
	}
	i, j = max(min(i, n), 1), min(j, n)
	if i > j {
		L.Push(lua.LString(""))
		return 1
	}
	chargeSteps(L, "table.concat", j-i+1)
	b := budgetOf(L)
	size := 0
	for k := i; k <= j; k++ {
		v := t.RawGetInt(k)
		if !lua.LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type(), k)
		}
		size += len(lua.LVAsString(v))
		if k < j {
			size += len(sep)
		}
		if size > b.room() {
			b.exhaust(L, "table.concat could make more than the %d bytes left", b.room())
		}
	}
	var out strings.Builder
	out.Grow(size)
	for k := i; k <= j; k++ {
		out.WriteString(lua.LVAsString(t.RawGetInt(k)))
		if k < j {
			out.WriteString(sep)
		}
	}
	L.Push(lua.LString(out.String()))
	return 1
}
