package interpret_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// bombLimit is how long a bomb may take and how much it may allocate: a
// budget error comes well within both, on a loaded machine too.
const (
	bombTime  = 10 * time.Second
	bombBytes = 512 << 20
)

// runBomb calls a GetReplicas script, giving up after bombTime, and
// returns the error and what the call allocated.
func runBomb(t *testing.T, src string, opts ...interpret.Option) (uint64, error) {
	t.Helper()
	in, err := interpret.New([]api.ResourceInterpreterCustomization{widgetRIC("bomb", api.CustomizationRules{ReplicaResource: lua(src)})}, opts...)
	if err != nil {
		return 0, err
	}
	w := obj(t, widget)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() {
		_, _, err := in.GetReplicas(w)
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(bombTime):
		t.Fatalf("still running after %s", bombTime)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// TestLibraryBombs: each script makes one library call (or one
// instruction) do unbounded work or allocate gigabytes. Each stops within
// bombTime, having allocated less than bombBytes, with a budget error
// naming the customization, the operation and the line.
func TestLibraryBombs(t *testing.T) {
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	cases := []struct{ name, body, want string }{
		{"find backtracking", `string.find(string.rep("a", 5000), ".-.-.-.-.-b")`, "string.find"},
		{"match backtracking", `string.match(string.rep("a", 5000), "a*a*a*a*a*a*c")`, "string.match"},
		{"match with captures backtracking", `string.match(string.rep("a", 5000), "(.-)(.-)(.-)(.-)%1%2b")`, "string.match"},
		{"gmatch backtracking", `for w in string.gmatch(string.rep("a", 5000), ".-.-.-.-b") do end`, "string.gmatch"},
		{"gsub backtracking", `string.gsub(string.rep("a", 5000), ".-.-.-.-b", "")`, "string.gsub"},
		{"gsub table replacement", `local big = string.rep("x", 1000000)
  string.gsub(string.rep("a", 100000), "a", {a = big})`, "string.gsub"},
		{"gsub function replacement", `local big = string.rep("x", 1000000)
  string.gsub(string.rep("a", 100000), "a", function() return big end)`, "string.gsub"},
		{"gsub string replacement", `local big = string.rep("x", 1000000)
  string.gsub(string.rep("a", 100000), "a", big)`, "string.gsub"},
		{"table.concat separator", `local t = {}
  for i = 1, 30000 do t[i] = "a" end
  table.concat(t, string.rep("x", 1000000))`, "table.concat"},
		{"table.concat of big strings", `local t, big = {}, string.rep("x", 1000000)
  for i = 1, 2000 do t[i] = big end
  table.concat(t)`, "table.concat"},
		{"string.format directives", `string.format(string.rep("%999999[1]d", 10000), 1)`, "string.format"},
		{"string.format of a big string", `string.format(string.rep("%[1]s", 5000), string.rep("x", 1000000))`, "string.format"},
		{"table.insert far past the end", `table.insert({}, 50000000, 1)`, "table.insert"},
		{"concatenation of many copies", "local s = string.rep(\"x\", 20000000)\n  local x = " + rep("s .. ", 150) + "s", "held at once"},
		{"sparse array", `local keep = {}
  for i = 1, 100 do local t = {} t[2000000] = 1 keep[i] = t end`, "bytes made"},
		{"tonumber of a long string", `local s = string.rep("x", 10000000)
  for i = 1, 100000 do local n = tonumber(s) end`, "tonumber"},
		{"shared tables converted", `local t = {}
  for i = 1, 30 do t = {t, t} end
  do return 1, t end`, "values to convert"},
		{"pod template of shared tables", `local t = {}
  for i = 1, 30 do t = {t, t} end
  require("kube").accuratePodRequirements({spec = {containers = t}})`, "accuratePodRequirements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Without the deadline: the counted budgets decide, the
			// same way on a loaded machine.
			alloc, err := runBomb(t, fmt.Sprintf("function GetReplicas(obj)\n  %s\n  return 1, nil\nend", c.body), interpret.WithCallTimeout(0))
			checkBudgetError(t, err, `customization "bomb"`, "replicaResource", "budget exhausted", c.want)
			if alloc > bombBytes {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestQuadraticGsub: gsub over many matches builds its result once (it
// used to copy the whole string per match: minutes for these).
func TestQuadraticGsub(t *testing.T) {
	for _, repl := range []string{`"bb"`, `{a = "bb"}`, `function(c) return "bb" end`} {
		t.Run(repl, func(t *testing.T) {
			alloc, err := runBomb(t, `function GetReplicas(obj)
  local s, n = string.gsub(string.rep("a", 200000), "a", `+repl+`)
  if #s ~= 400000 or n ~= 200000 then error("gsub gave " .. #s .. " bytes, " .. n .. " matches") end
  return 1, nil
end`, interpret.WithCallTimeout(0))
			if err != nil {
				t.Fatal(err)
			}
			if alloc > bombBytes {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestCallDeadline: a call whose every instruction is slow (comparing two
// 15 MB strings) stays within the instruction and memory budgets for
// minutes; the deadline stops it, and a call without the deadline but
// with a short one set stops as soon.
func TestCallDeadline(t *testing.T) {
	slow := `function GetReplicas(obj)
  local a, b = string.rep("x", 15000000), string.rep("x", 15000000)
  local same = 0
  while true do
    if a == b then same = same + 1 end
  end
end`
	start := time.Now()
	_, err := runBomb(t, slow)
	if !interpret.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("error %v, want the deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stopped after %s, want about %s", took, interpret.DefaultCallTimeout)
	}
	start = time.Now()
	_, err = runBomb(t, "function GetReplicas(obj)\n  for i = 1, 400000 do end\n  return 1, nil\nend", interpret.WithCallTimeout(time.Nanosecond))
	if !interpret.IsBudgetExceeded(err) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("with a 1ns deadline: error %v, want the deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("with a 1ns deadline: stopped after %s", took)
	}
}

// TestLongUnpack: unpacking a long range stops at the value stack's cap
// (the stack used to grow 32 values at a time, copying itself: a
// gigabyte and seconds).
func TestLongUnpack(t *testing.T) {
	for _, body := range []string{`local x = {unpack({}, 1, 100000000)}`, `local x = {string.byte(string.rep("x", 10000000), 1, -1)}`} {
		start := time.Now()
		alloc, err := runBomb(t, "function GetReplicas(obj)\n  "+body+"\n  return 1, nil\nend", interpret.WithCallTimeout(0))
		if err == nil || !strings.Contains(err.Error(), "registry overflow") {
			t.Errorf("%s: %v, want registry overflow", body, err)
		}
		if took := time.Since(start); took > 2*time.Second || alloc > 128<<20 {
			t.Errorf("%s: took %s and %d MiB", body, took, alloc>>20)
		}
	}
}

// TestSparseIndex: an index past the array part is an ordinary table key
// (gopher-lua used to fill the gap with 60 million nils in one
// instruction, 1 GB and seconds).
func TestSparseIndex(t *testing.T) {
	start := time.Now()
	alloc, err := runBomb(t, `function GetReplicas(obj)
  local t = {}
  t[60000000] = 1
  if t[60000000] ~= 1 then error("t[60000000] = " .. tostring(t[60000000])) end
  return 1, nil
end`, interpret.WithCallTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second || alloc > 64<<20 {
		t.Errorf("took %s and %d MiB", took, alloc>>20)
	}
}

// checkBudgetError fails t unless err is a budget error whose message holds
// every one of parts (the customization, the operation, the object, what
// ran out).
func checkBudgetError(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !interpret.IsBudgetExceeded(err) {
		t.Errorf("IsBudgetExceeded(%q) = false", err)
	}
	for _, w := range parts {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
