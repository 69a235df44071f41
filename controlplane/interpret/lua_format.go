package interpret

import (
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// string.format is gopher-lua's, which hands the format and the arguments
// to Go's fmt (scripts written for Karmada rely on that: %s of nil, %d of
// a string holding a number). Go's fmt caps a width or precision at a
// million, but not the number of directives, and an explicit argument
// index (%[1]999999d) reuses one argument as often as the format says, so
// checkFormat bounds the result's size before the call. A table,
// function or other reference may only be formatted through its name
// (%s, %v, %q, %x, %X): Go prints the whole structure for other verbs.

const (
	// fmtMaxWidth is the largest width or precision Go's fmt applies.
	fmtMaxWidth = 1_000_000
	// fmtScalar bounds a number or boolean formatted without width or
	// precision (a float64 %f prints up to 309 digits).
	fmtScalar = 400
	// fmtPerByte bounds what one byte of a string argument becomes (% #x
	// writes "0x61 " for "a").
	fmtPerByte = 6
)

// fmtDirective is one directive of a format: the index of its argument
// (-1 for none, as in %%), its width and precision (0 when absent) and
// its verb.
type fmtDirective struct {
	arg, width, prec int
	verb             rune
	sharp            bool
}

// parseFormat splits a format as Go's fmt does, without explicit argument
// indexes or '*' (sequential reports false for those: argument positions
// are then not tracked).
func parseFormat(format string) (lits int, dirs []fmtDirective, sequential bool) {
	sequential = !strings.ContainsAny(format, "[*")
	arg := 0
	for i := 0; i < len(format); {
		if format[i] != '%' {
			lits++
			i++
			continue
		}
		i++
		d := fmtDirective{arg: -1}
		for ; i < len(format) && strings.IndexByte("#0+- ", format[i]) >= 0; i++ {
			d.sharp = d.sharp || format[i] == '#'
		}
		// num reads a width or precision: digits, or '*' (an argument,
		// at most fmtMaxWidth), after an argument index in brackets.
		num := func() int {
			if i < len(format) && format[i] == '[' {
				if j := strings.IndexByte(format[i:], ']'); j >= 0 {
					i += j + 1
				}
			}
			if i < len(format) && format[i] == '*' {
				i++
				return fmtMaxWidth
			}
			n := 0
			for ; i < len(format) && '0' <= format[i] && format[i] <= '9'; i++ {
				n = min(n*10+int(format[i]-'0'), fmtMaxWidth+1)
			}
			return n
		}
		d.width = num()
		if i < len(format) && format[i] == '.' {
			i++
			d.prec = num()
		}
		if i < len(format) && format[i] == '[' {
			if j := strings.IndexByte(format[i:], ']'); j >= 0 {
				i += j + 1
			}
		}
		if i >= len(format) {
			dirs = append(dirs, d)
			break
		}
		r, size := utf8.DecodeRuneInString(format[i:])
		i += size
		d.verb = r
		if r != '%' {
			d.arg = arg
			arg++
		}
		dirs = append(dirs, d)
	}
	return lits, dirs, sequential
}

// checkFormat raises an error, before anything is formatted, when
// string.format's result could be larger than the call's memory has left
// or would print a reference's structure.
func checkFormat(L *lua.LState) {
	format := L.CheckString(1)
	args := make([]lua.LValue, L.GetTop()-1)
	for i := range args {
		args[i] = L.Get(i + 2)
	}
	lits, dirs, sequential := parseFormat(format)
	// Without argument positions, any directive may format the largest
	// argument.
	largest := 0
	for _, a := range args {
		largest = max(largest, argSize(a))
	}
	b := budgetOf(L)
	size := lits
	for _, d := range dirs {
		if d.width > fmtMaxWidth || d.prec > fmtMaxWidth {
			L.RaiseError("string.format: invalid format (width or precision too long)")
		}
		n := largest
		if sequential {
			n = 0
			if d.arg >= 0 && d.arg < len(args) {
				n = argSize(args[d.arg])
			}
		}
		for _, a := range args {
			if !sequential || (d.arg >= 0 && d.arg < len(args) && args[d.arg] == a) {
				if isReference(a) && (d.sharp || !strings.ContainsRune("svqxX", d.verb)) {
					L.RaiseError("string.format: a %s can only be formatted with %%s", a.Type())
				}
			}
		}
		size += d.width + d.prec + n + fmtScalar
		if size > b.room() {
			b.exhaust(L, "string.format could make more than the %d bytes left", b.room())
		}
	}
}

// argSize bounds what one argument becomes in a directive without width
// or precision.
func argSize(v lua.LValue) int {
	if s, ok := v.(lua.LString); ok {
		return fmtPerByte*len(s) + 2
	}
	return fmtScalar
}

// isReference is a value Go's fmt would print as a structure.
func isReference(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber, lua.LBool, *lua.LNilType:
		return false
	}
	return true
}
