package interpret

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Limits of one call of a customization's script. They are counted, not
// timed, so the same script on the same object always succeeds or fails
// the same way, on a loaded CI machine as on a laptop.
const (
	// InstructionBudget is how many Lua VM instructions one call may run
	// (loading the script, requiring kube and the function itself). A
	// status aggregation over a hundred members runs a few tens of
	// thousands.
	InstructionBudget = 2_000_000
	// MemoryBudget caps, in bytes, the strings one call makes: every
	// string of trackedString bytes or more that appears in the running
	// frame and was not there one instruction before counts once, so
	// strings kept in tables count when they are made. Smaller ones are
	// bounded by the instruction budget. string.rep is checked before it
	// allocates.
	MemoryBudget = 32 << 20
	// callStackSize bounds recursion depth.
	callStackSize = 200
	// registrySize and registryMaxSize bound the value stack.
	registrySize    = 1024
	registryMaxSize = 64 * 1024
	// trackedString is the smallest string MemoryBudget counts.
	trackedString = 16
)

// removedGlobals are the base library functions a script may not call, as
// in Karmada's VM: loading code, reaching the environment or metatables,
// and collecting garbage. Scripts that work in Karmada do not use them.
var removedGlobals = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
	"rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy", "print",
}

// absentLibraries are the standard libraries a script reaching for gets a
// clear error from, rather than "attempt to index a nil value".
var absentLibraries = []string{"os", "io", "debug", "package", "coroutine", "channel"}

// scriptError is a script that failed: it names the customization, the
// operation and, from the Lua error, the line.
type scriptError struct {
	customization string
	operation     string
	err           error
}

func (e *scriptError) Error() string {
	return fmt.Sprintf("resource interpreter customization %s: %s: %v", e.customization, e.operation, e.err)
}

func (e *scriptError) Unwrap() error { return e.err }

// errBudget is what a script that ran out of instructions or memory wraps.
var errBudget = errors.New("budget exhausted")

// budget is the context the VM polls before every instruction: it counts
// instructions and the bytes of the strings the script makes, and reports
// itself done once either runs out. Nothing in it reads the clock.
type budget struct {
	L    *lua.LState
	left int
	// made is the bytes of strings made so far; prev and cur are the
	// tracked strings of the running frame at the previous instruction
	// and at this one.
	made      int
	prev, cur []lua.LString
	done      chan struct{}
	err       error
}

func newBudget() *budget {
	done := make(chan struct{})
	close(done)
	return &budget{left: InstructionBudget, done: done}
}

// Deadline reports no deadline: the budget is counted, not timed.
func (b *budget) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value carries nothing.
func (b *budget) Value(any) any { return nil }

// Err says which budget ran out.
func (b *budget) Err() error { return b.err }

// Done is polled by the VM before each instruction; a nil channel lets the
// instruction run, the closed one stops the script.
func (b *budget) Done() <-chan struct{} {
	if b.err != nil {
		return b.done
	}
	b.left--
	if b.left < 0 {
		b.err = fmt.Errorf("%w: more than %d instructions", errBudget, InstructionBudget)
		return b.done
	}
	if b.account() > MemoryBudget {
		b.err = fmt.Errorf("%w: strings of more than %d bytes made", errBudget, MemoryBudget)
		return b.done
	}
	return nil
}

// account adds the strings that appeared in the running frame since the
// previous instruction to what the call made, and returns the total. A
// new string lands in a register of the running frame whatever makes it
// (a concatenation, a library function), so each is seen once; one passed
// to or returned from a function is already in the previous frame's
// registers and is not counted again.
func (b *budget) account() int {
	b.cur = b.cur[:0]
	for i := 1; i <= b.L.GetTop(); i++ {
		s, ok := b.L.Get(i).(lua.LString)
		if !ok || len(s) < trackedString {
			continue
		}
		b.cur = append(b.cur, s)
		if !slices.Contains(b.prev, s) {
			b.made += len(s)
		}
	}
	b.prev, b.cur = b.cur, b.prev
	return b.made
}

// newState is a fresh sandboxed VM: the base, table, string and math
// libraries without the functions in removedGlobals, no os, io, package or
// coroutine libraries, and a require that knows only kube. Every call gets
// its own state, so no script sees another's globals.
func newState() (*lua.LState, error) {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       callStackSize,
		RegistrySize:        registrySize,
		RegistryMaxSize:     registryMaxSize,
		IncludeGoStackTrace: false,
	})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			L.Close()
			return nil, fmt.Errorf("open Lua library %s: %w", lib.name, err)
		}
	}
	for _, name := range removedGlobals {
		fn := name
		L.SetGlobal(fn, L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s is not available to resource interpreter scripts", fn)
			return 0
		}))
	}
	for _, name := range absentLibraries {
		lib := name
		t, meta := L.NewTable(), L.NewTable()
		meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("the %s library is not available to resource interpreter scripts", lib)
			return 0
		}))
		L.SetMetatable(t, meta)
		L.SetGlobal(lib, t)
	}
	L.SetGlobal("require", L.NewFunction(requireKube))
	guardStringLibrary(L)
	b := newBudget()
	b.L = L
	L.SetContext(b)
	return L, nil
}

// formatWidth finds a width or precision in a string.format directive.
var formatWidth = regexp.MustCompile(`%[-+ #0]*(\d*)(?:\.(\d*))?`)

// guardStringLibrary wraps the string functions that can make a string far
// larger than their arguments in one call, so the allocation is refused
// before it happens: rep (a count), format (a width or precision) and gsub
// (a replacement string repeated per match).
func guardStringLibrary(L *lua.LState) {
	str := L.GetGlobal(lua.StringLibName).(*lua.LTable)
	guard := func(name string, check func(L *lua.LState) (int, bool)) {
		fn := L.GetField(str, name)
		L.SetField(str, name, L.NewFunction(func(L *lua.LState) int {
			if n, over := check(L); over {
				L.RaiseError("%v: string.%s could make %d bytes, more than %d", errBudget, name, n, MemoryBudget)
			}
			return callThrough(L, fn)
		}))
	}
	// Sizes are compared by division: the product of two large counts
	// overflows.
	guard("rep", func(L *lua.LState) (int, bool) {
		size, n := len(L.CheckString(1)), L.OptInt(2, 0)
		return n, size > 0 && n > MemoryBudget/size
	})
	guard("format", func(L *lua.LState) (int, bool) {
		for _, m := range formatWidth.FindAllStringSubmatch(L.CheckString(1), -1) {
			for _, digits := range m[1:] {
				if n, err := strconv.Atoi(digits); len(digits) > 0 && (err != nil || n > MemoryBudget) {
					return n, true
				}
			}
		}
		return 0, false
	})
	guard("gsub", func(L *lua.LState) (int, bool) {
		repl, ok := L.Get(3).(lua.LString)
		size := len(L.CheckString(1)) + 1
		return size, ok && len(repl) > 0 && size > MemoryBudget/len(repl)
	})
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

// requireKube is require for scripts: kube is the only module.
func requireKube(L *lua.LState) int {
	name := L.CheckString(1)
	if name != kubeLibName {
		L.RaiseError("module %q is not available to resource interpreter scripts; only %q is", name, kubeLibName)
		return 0
	}
	L.Push(kubeModule(L))
	return 1
}

// load runs script in L under the operation's name, so errors say
// "<operation>:<line>:", and returns its global function fn.
func load(L *lua.LState, customization, operation, script, fn string) (*lua.LFunction, error) {
	fail := func(err error) (*lua.LFunction, error) {
		return nil, &scriptError{customization: customization, operation: operation, err: cleanLuaError(err)}
	}
	chunk, err := L.Load(strings.NewReader(script), operation)
	if err != nil {
		return fail(err)
	}
	L.Push(chunk)
	if err := L.PCall(0, 0, nil); err != nil {
		return fail(err)
	}
	f, ok := L.GetGlobal(fn).(*lua.LFunction)
	if !ok {
		return fail(fmt.Errorf("the script defines no function %s", fn))
	}
	return f, nil
}

// run loads script, calls its global function fn with args and returns
// nRet results as JSON-shaped Go values (map[string]any, []any, int64,
// float64, string, bool or nil). An empty Lua table comes back as an empty
// map (fixEmpty tells it from an empty array).
func run(customization, operation, script, fn string, nRet int, args ...any) ([]any, error) {
	fail := func(err error) ([]any, error) {
		return nil, &scriptError{customization: customization, operation: operation, err: cleanLuaError(err)}
	}
	L, err := newState()
	if err != nil {
		return fail(err)
	}
	defer L.Close()
	f, err := load(L, customization, operation, script, fn)
	if err != nil {
		return nil, err
	}
	values := make([]lua.LValue, len(args))
	for i, a := range args {
		if values[i], err = toLua(L, a); err != nil {
			return fail(fmt.Errorf("argument %d of %s: %w", i+1, fn, err))
		}
	}
	// A budget that runs out raises its own message at the line it
	// stopped on.
	if err := L.CallByParam(lua.P{Fn: f, NRet: nRet, Protect: true}, values...); err != nil {
		return fail(err)
	}
	out := make([]any, nRet)
	for i := range out {
		v, err := fromLua(L.Get(i+1), 0)
		if err != nil {
			return fail(fmt.Errorf("result %d of %s: %w", i+1, fn, err))
		}
		out[i] = v
	}
	return out, nil
}

// cleanLuaError keeps the message of a Lua error, whose first line already
// says "<operation>:<line>:", without gopher-lua's stack traceback.
func cleanLuaError(err error) error {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		msg := apiErr.Object.String()
		if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
			msg = msg[:i]
		}
		return luaError(msg)
	}
	return err
}
