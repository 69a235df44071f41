package interpret

import (
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// FixedTime is what os.time() and os.date() read in a script unless the
// Interpreter is given a clock (WithClock): the Unix epoch. The front ends
// whose output must be reproducible (preview, a Terraform plan and the
// apply that honours it) use it, so the same script on the same object
// gives the same result on every run.
var FixedTime = time.Unix(0, 0).UTC()

// WithClock sets the clock os.time() and os.date() read in a script: the
// real one (time.Now) where a status is live, as in continuous mode.
// Without it they read FixedTime. Nothing else of the os library is given
// to scripts.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// maxDateExpansion bounds the bytes one conversion of os.date's format
// makes ("%c" is the longest, 24), so the result's size is known before it
// is built.
const maxDateExpansion = 32

// openOS sets the global os to Karmada's safe subset of the library, time
// and date, reading now for the current time. Any other field raises, as
// the absent libraries do. Times are in UTC whether or not a format starts
// with "!": a script's result must not depend on the machine's time zone.
func openOS(L *lua.LState, now func() time.Time) {
	t := L.NewTable()
	t.RawSetString("time", L.NewFunction(func(L *lua.LState) int { return osTime(L, now) }))
	t.RawSetString("date", L.NewFunction(func(L *lua.LState) int { return osDate(L, now) }))
	meta := L.NewTable()
	meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("os.%s is not available to resource interpreter scripts; only os.time and os.date are", L.CheckString(2))
		return 0
	}))
	L.SetMetatable(t, meta)
	L.SetGlobal("os", t)
}

// osTime is Lua's os.time: the current time in seconds, or the time a
// table {year, month, day, hour = 12, min = 0, sec = 0} names.
func osTime(L *lua.LState, now func() time.Time) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		L.Push(lua.LNumber(now().Unix()))
		return 1
	}
	tbl := L.CheckTable(1)
	field := func(key string, def int, required bool) int {
		switch v := tbl.RawGetString(key).(type) {
		case lua.LNumber:
			return int(v)
		case *lua.LNilType:
			if required {
				L.RaiseError("os.time: field %q missing in date table", key)
			}
			return def
		default:
			L.RaiseError("os.time: field %q is a %s, want a number", key, v.Type())
			return def
		}
	}
	year, month, day := field("year", 0, true), field("month", 0, true), field("day", 0, true)
	hour, minute, sec := field("hour", 12, false), field("min", 0, false), field("sec", 0, false)
	L.Push(lua.LNumber(time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC).Unix()))
	return 1
}

// osDate is Lua's os.date(format, time): format (default "%c") as C's
// strftime does it, or "*t" for a table of the fields, of time (seconds;
// default now).
func osDate(L *lua.LState, now func() time.Time) int {
	format := L.OptString(1, "%c")
	t := now()
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		t = time.Unix(L.CheckInt64(2), 0)
	}
	t = t.UTC()
	format = strings.TrimPrefix(format, "!")
	if strings.HasPrefix(format, "*t") {
		out := L.CreateTable(0, 9)
		// Set in a fixed order: pairs() follows it.
		for _, f := range []struct {
			k string
			v int
		}{
			{"year", t.Year()}, {"month", int(t.Month())}, {"day", t.Day()}, {"hour", t.Hour()}, {"min", t.Minute()},
			{"sec", t.Second()}, {"wday", int(t.Weekday()) + 1}, {"yday", t.YearDay()},
		} {
			out.RawSetString(f.k, lua.LNumber(f.v))
		}
		out.RawSetString("isdst", lua.LFalse)
		L.Push(out)
		return 1
	}
	chargeSteps(L, "os.date", len(format))
	if b := budgetOf(L); len(format) > b.room()/maxDateExpansion {
		b.exhaust(L, "os.date could make %d times %d bytes, more than the %d left", len(format), maxDateExpansion, b.room())
	}
	L.Push(lua.LString(strftime(t, format)))
	return 1
}

// strftimeLayouts are C's strftime conversions in the C locale, as Go
// layouts; %e, %j, %u and %w are computed.
var strftimeLayouts = map[byte]string{
	'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'c': "Mon Jan _2 15:04:05 2006",
	'd': "02", 'D': "01/02/06", 'F': "2006-01-02", 'h': "Jan", 'H': "15", 'I': "03", 'm': "01",
	'M': "04", 'p': "PM", 'r': "03:04:05 PM", 'R': "15:04", 'S': "05", 'T': "15:04:05",
	'x': "01/02/06", 'X': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700", 'Z': "MST",
}

// strftime formats t as C's strftime in the C locale; an unknown
// conversion is copied as it is.
func strftime(t time.Time, format string) string {
	var sb strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i == len(format)-1 {
			sb.WriteByte(c)
			continue
		}
		i++
		c = format[i]
		if layout, ok := strftimeLayouts[c]; ok {
			sb.WriteString(t.Format(layout))
			continue
		}
		switch c {
		case '%':
			sb.WriteByte('%')
		case 'e':
			fmt.Fprintf(&sb, "%2d", t.Day())
		case 'j':
			fmt.Fprintf(&sb, "%03d", t.YearDay())
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			fmt.Fprintf(&sb, "%d", (int(t.Weekday())+6)%7+1)
		case 'w':
			fmt.Fprintf(&sb, "%d", int(t.Weekday()))
		case 's':
			fmt.Fprintf(&sb, "%d", t.Unix())
		default:
			sb.WriteByte('%')
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
