package interpret_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// scriptGlobals is every global a script can see, and every field of the
// libraries, by kind: what a script may use, the stubs that raise "not
// available", and the libraries that raise when indexed. Anything else
// (gopher-lua's _printregs printed the VM's registers to the process's
// standard output) fails TestScriptGlobalsAllowed.
var scriptGlobals = map[string][]string{
	"_G": {
		"_G", "_VERSION", "assert", "error", "ipairs", "math", "next", "pairs", "pcall", "require", "select",
		"string", "table", "tonumber", "tostring", "type", "unpack", "xpcall",
		// stubs
		"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring", "module",
		"newproxy", "print", "rawequal", "rawget", "rawset", "setfenv", "setmetatable",
		// absent libraries
		"channel", "coroutine", "debug", "io", "package",
		// Karmada's safe subset (os.time and os.date)
		"os",
	},
	"os": {"date", "time"},
	// string is also the strings' metatable in gopher-lua: __index is
	// string itself.
	"string": {"__index", "byte", "char", "dump", "find", "format", "gfind", "gmatch", "gsub", "len", "lower", "match", "rep", "reverse", "sub", "upper"},
	"table":  {"concat", "getn", "insert", "maxn", "remove", "sort"},
	"math": {"abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor", "fmod", "frexp", "huge", "ldexp",
		"log", "log10", "max", "min", "mod", "modf", "pi", "pow", "rad", "random", "randomseed", "sin", "sinh", "sqrt", "tan", "tanh"},
}

// TestScriptGlobalsAllowed lists, from inside a script, every global and
// library field it can reach, and checks each list against scriptGlobals.
func TestScriptGlobalsAllowed(t *testing.T) {
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("globals", api.CustomizationRules{StatusReflection: lua(`
local function names(t)
  local out = {}
  for k in pairs(t) do
    if k ~= "ReflectStatus" then out[#out + 1] = tostring(k) end
  end
  return out
end
function ReflectStatus(obj)
  return {_G = names(_G), string = names(string), table = names(table), math = names(math), os = names(os)}
end`)})})
	if err != nil {
		t.Fatal(err)
	}
	got, err := in.ReflectStatus(obj(t, widget))
	if err != nil {
		t.Fatal(err)
	}
	for lib, want := range scriptGlobals {
		var names []string
		for _, n := range got[lib].([]any) {
			names = append(names, n.(string))
		}
		sort.Strings(names)
		want = slices.Sorted(slices.Values(want))
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("%s (-allowed +seen):\n%s", lib, diff)
		}
	}
	// The stubs and absent libraries raise.
	for _, call := range []string{"print('x')", "getmetatable('')", "os.exit(1)", "debug.traceback()"} {
		in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("stub", api.CustomizationRules{HealthInterpretation: lua(
			"function InterpretHealth(obj)\n  " + call + "\n  return true\nend")})})
		if err != nil {
			t.Fatal(err)
		}
		if h, msg := in.InterpretHealth(obj(t, widget)); h != interpret.Unknown || !strings.Contains(msg, "not available") {
			t.Errorf("%s: %s %q, want Unknown and not available", call, h, msg)
		}
	}
}
