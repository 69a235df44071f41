package interpret

import (
	"fmt"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// evalLua runs "return <expr>" in L and returns the results as strings
// ("nil" for nil), or the error.
func evalLua(L *lua.LState, expr string) ([]string, error) {
	top := L.GetTop()
	if err := L.DoString("return " + expr); err != nil {
		return nil, err
	}
	var out []string
	for i := top + 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).String())
	}
	L.SetTop(top)
	return out, nil
}

// sandboxState is a state with flotilla's libraries and a budget.
func sandboxState(t *testing.T) *lua.LState {
	t.Helper()
	L, err := newState(0, func() time.Time { return FixedTime })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(L.Close)
	return L
}

// TestPatternsAsGopherLua: on ordinary patterns, the bounded string.find,
// match, gmatch and gsub give what gopher-lua's give (the library Karmada
// runs scripts with).
func TestPatternsAsGopherLua(t *testing.T) {
	gmatch := func(s, p string) string {
		return fmt.Sprintf(`(function() local t = {} for a, b in string.gmatch(%q, %q) do t[#t+1] = tostring(a) .. ":" .. tostring(b) end return table.concat(t, ";") end)()`, s, p)
	}
	exprs := []string{
		`string.find("hello world", "wor")`,
		`string.find("hello world", "o", 6)`,
		`string.find("hello world", "o", -3)`,
		`string.find("hello", "l+")`,
		`string.find("hello", "^h")`,
		`string.find("hello", "^e")`,
		`string.find("hello", "o$")`,
		`string.find("hello", "l$")`,
		`string.find("key=value", "(%w+)=(%w+)")`,
		`string.find("abc", "()b()")`,
		`string.find("THE (quick) fox", "%((%a+)%)")`,
		`string.find("f(a(b)c)d", "%b()")`,
		`string.find("hello.world", ".", 1, true)`,
		`string.find("a+b", "+", 1, true)`,
		`string.find("a.b", "%.")`,
		`string.find("x = 10", "%d+")`,
		`string.find("hello", "xyz")`,
		`string.find("hello", "l*")`,
		`string.find("hello", "l-o")`,
		`string.find("aaa", "a?a?a")`,
		`string.find("hello hello", "(h%a+) %1")`,
		`string.find("a\0b", "%z")`,
		`string.match("  trim me  ", "^%s*(.-)%s*$")`,
		`string.match("abc123def", "[%a]+")`,
		`string.match("abc123def", "[^%a]+")`,
		`string.match("abc-def", "[a-c]+")`,
		`string.match("a-b", "[%-]")`,
		`string.match("x]y", "[]]")`,
		`string.match("10.244.0.1", "^(%d+)%.(%d+)%.(%d+)%.(%d+)$")`,
		`string.match("v1.2.3-rc1", "^v(%d+)%.(%d+)%.(%d+)")`,
		`string.match("app=web,tier=front", "tier=([^,]+)")`,
		`string.match("100m", "^(%d+)m$")`,
		`string.match("2Gi", "^(%d+)(%a+)$")`,
		`string.match("[x]", "%[(.)%]")`,
		`string.match("Hello World", "%u%l+", 2)`,
		`string.match("tab\there", "%c")`,
		`string.match("a1_B2", "[%w_]+")`,
		`string.match("0x1F", "0x(%x+)")`,
		`string.match("a,b", "%p")`,
		`string.match("abc", ".-b")`,
		`string.match("abc", "()")`,
		`string.match("registry.io/app:v2", "^(.-):([^:]+)$")`,
		`string.match("", ".*")`,
		`string.gsub("hello world", "o", "0")`,
		`string.gsub("hello world", "(%w+)", "<%1>")`,
		`string.gsub("hello world", "%w+", "%0 %0", 1)`,
		`string.gsub("abc", "", "-")`,
		`string.gsub("  x  ", "^%s+", "")`,
		`string.gsub("a.b.c", "%.", "/")`,
		`string.gsub("100%", "%%", " percent")`,
		`string.gsub("$name is $age", "%$(%w+)", {name = "bob", age = 3})`,
		`string.gsub("$name is $unknown", "%$(%w+)", {name = "bob"})`,
		`string.gsub("hello world", "%w+", string.upper)`,
		`string.gsub("hello world", "(o)", function(o) return nil end)`,
		`string.gsub("abc", "()", "%1")`,
		`string.gsub("a b c", " ", "", 5)`,
		`string.gsub("x", "x", "%%")`,
		gmatch("k1=v1, k2=v2", "(%w+)=(%w+)"),
		gmatch("one two  three", "%a+"),
		gmatch("a,b,,c", "([^,]*)"),
		gmatch("abc", "()"),
	}
	raw := lua.NewState()
	defer raw.Close()
	ours := sandboxState(t)
	for _, e := range exprs {
		want, werr := evalLua(raw, e)
		got, gerr := evalLua(ours, e)
		if werr != nil || gerr != nil {
			t.Errorf("%s: gopher-lua error %v, ours %v", e, werr, gerr)
			continue
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s = %q, gopher-lua gives %q", e, got, want)
		}
	}
	// Malformed patterns are errors in both.
	for _, e := range []string{
		`string.find("abc", "[a")`, `string.find("abc", "(a")`, `string.find("abc", "(a))")`,
		`string.find("abc", "%1")`, `string.match("abc", "(%1)")`,
	} {
		_, werr := evalLua(raw, e)
		_, gerr := evalLua(ours, e)
		if werr == nil || gerr == nil {
			t.Errorf("%s: gopher-lua error %v, ours %v; want both", e, werr, gerr)
		}
	}
}

// TestPatternsAsLua51: where gopher-lua's matcher departs from Lua 5.1,
// flotilla's follows Lua 5.1.
func TestPatternsAsLua51(t *testing.T) {
	ours := sandboxState(t)
	for _, c := range []struct{ expr, want string }{
		// gopher-lua returns nothing at all.
		{`select("#", string.match("abc", "x"))`, "1"},
		// gopher-lua has no frontier pattern (%f is a literal f).
		{`string.find("THE (quick) fox", "%f[%a]%a+", 5)`, "6|10"},
		{`string.gsub("THE (quick) fox", "%f[%w]%w+", "X")`, "X (X) X|3"},
		// gopher-lua keeps the %.
		{`string.gsub("abc", "b", "%x")`, "axc|1"},
		// gopher-lua ignores init for an empty pattern.
		{`string.find("abc", "", 10)`, "4|3"},
		// A back-reference to a position capture matches nothing.
		{`string.find("aa", "()a%1")`, "nil"},
		// ')' is no special character: a plain search (gopher-lua
		// refuses the pattern).
		{`string.find("abc", "a)")`, "nil"},
		// gmatch reads '^' as a character.
		{`(function() local n = 0 for _ in string.gmatch("^a^a", "^a") do n = n + 1 end return n end)()`, "2"},
	} {
		got, err := evalLua(ours, c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("%s = %q, want %q", c.expr, g, c.want)
		}
	}
	// Lua 5.2's recursion limit: a pattern too deep is an error, not a
	// stack overflow.
	if _, err := evalLua(ours, `string.find(string.rep("a", 300), string.rep("a?", 300))`); err == nil || !strings.Contains(err.Error(), "pattern too complex") {
		t.Errorf("a pattern 300 items deep: %v", err)
	}
	// A pattern ending in '%' is malformed (gopher-lua reads it as a %).
	if _, err := evalLua(ours, `string.find("abc", "%")`); err == nil || !strings.Contains(err.Error(), "malformed pattern (ends with '%')") {
		t.Errorf("a pattern ending in %%: %v", err)
	}
}
