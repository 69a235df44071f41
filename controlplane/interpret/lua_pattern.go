package interpret

import "fmt"

// This file is flotilla's own Lua 5.1 pattern matcher, behind
// string.find, match, gmatch and gsub (lua_strlib.go). It follows the
// reference implementation (lstrlib.c) item for item: classes (%a %c %d %l
// %p %s %u %w %x %z and their complements), sets with ranges, anchors,
// the quantifiers * + - ?, captures including position captures, %b, %f
// and back-references %1-%9. It replaces gopher-lua's matcher, which
// backtracks without limit and recurses up to a million levels, so one
// call of string.find could run for hours. Here every step (one attempt
// at a pattern item, one character compared) is charged to the call's
// instruction budget as it is taken, and the recursion is bounded as in
// Lua 5.2 and later (200 levels: "pattern too complex"), so a backtracking
// pattern stops with a budget error within the budget's time.

const (
	patMaxCaptures = 32
	patMaxDepth    = 200
	capUnfinished  = -1
	capPosition    = -2
	patSpecials    = "^$*+?.([%-"
	// patChargeEvery is how many steps the matcher takes between two
	// charges to the budget.
	patChargeEvery = 256
)

// patError is a malformed pattern (or a capture misused), raised in the
// script as Lua raises it.
type patError struct{ msg string }

func (e *patError) Error() string { return e.msg }

// patBudget is the budget running out in the middle of a match.
type patBudget struct{ err error }

type patCapture struct{ init, len int }

// matcher matches one pattern against one subject, as lstrlib.c's
// MatchState does. charge, when set, is called with the steps taken since
// its last call and stops the match with its error.
type matcher struct {
	src, pat string
	level    int
	capture  [patMaxCaptures]patCapture
	depth    int
	steps    int
	charge   func(int) error
}

func (m *matcher) fail(format string, args ...any) {
	panic(&patError{fmt.Sprintf(format, args...)})
}

func (m *matcher) step(n int) {
	m.steps += n
	if m.steps >= patChargeEvery {
		m.flush()
	}
}

// flush charges the steps taken so far.
func (m *matcher) flush() {
	if m.charge != nil && m.steps > 0 {
		if err := m.charge(m.steps); err != nil {
			panic(&patBudget{err})
		}
	}
	m.steps = 0
}

// protect runs f, turning a malformed pattern or the budget running out
// into an error.
func (m *matcher) protect(f func()) (err error) {
	defer func() {
		switch r := recover().(type) {
		case nil:
			m.flush()
		case *patError:
			err = r
		case *patBudget:
			err = r.err
		default:
			panic(r)
		}
	}()
	f()
	return nil
}

// matchAt tries the pattern from p at the subject's byte s: the end of the
// match, or -1. The captures are in m.capture[:m.level].
func (m *matcher) matchAt(s, p int) int {
	m.level = 0
	return m.match(s, p)
}

func (m *matcher) classEnd(p int) int {
	c := m.pat[p]
	p++
	switch c {
	case '%':
		if p >= len(m.pat) {
			m.fail("malformed pattern (ends with '%%')")
		}
		return p + 1
	case '[':
		if p < len(m.pat) && m.pat[p] == '^' {
			p++
		}
		for { // the first character is never the closing ']'
			if p >= len(m.pat) {
				m.fail("malformed pattern (missing ']')")
			}
			c := m.pat[p]
			p++
			if c == '%' && p < len(m.pat) {
				p++
			}
			if p < len(m.pat) && m.pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// matchClass is %cl for the byte c, in the C locale.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 0x20 || c == 0x7f
	case 'd':
		res = '0' <= c && c <= '9'
	case 'l':
		res = 'a' <= c && c <= 'z'
	case 'p':
		res = c > 0x20 && c < 0x7f && !isAlpha(c) && (c < '0' || c > '9')
	case 's':
		res = c == ' ' || ('\t' <= c && c <= '\r')
	case 'u':
		res = 'A' <= c && c <= 'Z'
	case 'w':
		res = isAlpha(c) || ('0' <= c && c <= '9')
	case 'x':
		res = ('0' <= c && c <= '9') || ('a' <= c|0x20 && c|0x20 <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if 'A' <= cl && cl <= 'Z' {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// matchBracketClass matches c against the set from p ('[') to ec (']').
func (m *matcher) matchBracketClass(c byte, p, ec int) bool {
	sig := true
	if m.pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case m.pat[p] == '%':
			p++
			if matchClass(c, m.pat[p]) {
				return sig
			}
		case m.pat[p+1] == '-' && p+2 < ec:
			p += 2
			if m.pat[p-2] <= c && c <= m.pat[p] {
				return sig
			}
		case m.pat[p] == c:
			return sig
		}
	}
	return !sig
}

// singleMatch matches the subject's byte s against the item from p to ep.
func (m *matcher) singleMatch(s, p, ep int) bool {
	m.step(1)
	if s >= len(m.src) {
		return false
	}
	c := m.src[s]
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracketClass(c, p, ep-1)
	}
	return m.pat[p] == c
}

func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > patMaxDepth {
		m.fail("pattern too complex")
	}
	defer func() { m.depth-- }()
	for {
		m.step(1)
		if p >= len(m.pat) {
			return s
		}
		switch m.pat[p] {
		case '(':
			if p+1 < len(m.pat) && m.pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '$':
			if p+1 == len(m.pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		case '%':
			if p+1 < len(m.pat) {
				switch next := m.pat[p+1]; {
				case next == 'b':
					if s = m.matchBalance(s, p+2); s < 0 {
						return -1
					}
					p += 4
					continue
				case next == 'f':
					p += 2
					if p >= len(m.pat) || m.pat[p] != '[' {
						m.fail("missing '[' after '%%f' in pattern")
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if m.matchBracketClass(prev, p, ep-1) || !m.matchBracketClass(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case '0' <= next && next <= '9':
					if s = m.matchCapture(s, next); s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		}
		// A single-character item, with its quantifier if any.
		ep := m.classEnd(p)
		ok := m.singleMatch(s, p, ep)
		var q byte
		if ep < len(m.pat) {
			q = m.pat[ep]
		}
		switch q {
		case '?':
			if ok {
				if res := m.match(s+1, ep+1); res >= 0 {
					return res
				}
			}
			p = ep + 1
			continue
		case '*':
			return m.maxExpand(s, p, ep)
		case '+':
			if !ok {
				return -1
			}
			return m.maxExpand(s+1, p, ep)
		case '-':
			return m.minExpand(s, p, ep)
		}
		if !ok {
			return -1
		}
		s++
		p = ep
	}
}

func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for m.singleMatch(s+i, p, ep) {
		i++
	}
	for ; i >= 0; i-- {
		if res := m.match(s+i, ep+1); res >= 0 {
			return res
		}
	}
	return -1
}

func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if res := m.match(s, ep+1); res >= 0 {
			return res
		}
		if !m.singleMatch(s, p, ep) {
			return -1
		}
		s++
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= patMaxCaptures {
		m.fail("too many captures")
	}
	m.capture[m.level] = patCapture{init: s, len: what}
	m.level++
	res := m.match(s, p)
	if res < 0 {
		m.level--
	}
	return res
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.capture[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.fail("invalid pattern capture")
	}
	m.capture[l].len = s - m.capture[l].init
	res := m.match(s, p)
	if res < 0 {
		m.capture[l].len = capUnfinished
	}
	return res
}

func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.fail("unbalanced pattern")
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	b, e, cont := m.pat[p], m.pat[p+1], 1
	for s++; s < len(m.src); s++ {
		m.step(1)
		switch m.src[s] {
		case e:
			if cont--; cont == 0 {
				return s + 1
			}
		case b:
			cont++
		}
	}
	return -1
}

func (m *matcher) matchCapture(s int, c byte) int {
	l := int(c - '1')
	if l < 0 || l >= m.level || m.capture[l].len == capUnfinished {
		m.fail("invalid capture index")
	}
	n := m.capture[l].len
	m.step(max(n, 0))
	if n >= 0 && len(m.src)-s >= n && m.src[m.capture[l].init:m.capture[l].init+n] == m.src[s:s+n] {
		return s + n
	}
	return -1
}

// patCaptured is one capture of a match: a string, or a position (1-based)
// when isPos.
type patCaptured struct {
	str   string
	pos   int
	isPos bool
}

// captures returns the captures of the match from s to e, the whole match
// when the pattern has none and wholeIfNone.
func (m *matcher) captures(s, e int, wholeIfNone bool) []patCaptured {
	n := m.level
	if n == 0 && wholeIfNone {
		return []patCaptured{{str: m.src[s:e]}}
	}
	out := make([]patCaptured, n)
	for i := range out {
		out[i] = m.capture1(i, s, e)
	}
	return out
}

// capture1 is capture i of the match from s to e (the whole match for
// capture 0 of a pattern without captures).
func (m *matcher) capture1(i, s, e int) patCaptured {
	if i >= m.level {
		if i != 0 {
			m.fail("invalid capture index")
		}
		return patCaptured{str: m.src[s:e]}
	}
	c := m.capture[i]
	switch c.len {
	case capUnfinished:
		m.fail("unfinished capture")
	case capPosition:
		return patCaptured{pos: c.init + 1, isPos: true}
	}
	return patCaptured{str: m.src[c.init : c.init+c.len]}
}
