package interpret

import (
	"errors"
	"fmt"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// removedGlobals are the base library functions a script may not call, as
// in Karmada's VM: loading code, reaching the environment or metatables,
// and collecting garbage. Scripts that work in Karmada do not use them.
// Calling one raises a clear error.
var removedGlobals = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
	"rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy", "print",
}

// hiddenGlobals are gopher-lua additions to the base library that are no
// part of Lua 5.1 and that scripts do not see at all: _printregs prints
// the VM's registers to the process's standard output.
var hiddenGlobals = []string{"_printregs", "_GOPHER_LUA_VERSION"}

// absentLibraries are the standard libraries a script reaching for gets a
// clear error from, rather than "attempt to index a nil value".
var absentLibraries = []string{"io", "debug", "package", "coroutine", "channel"}

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

// newState is a fresh sandboxed VM whose budget's deadline is timeout
// away: the base, table, string and math libraries without the functions
// in removedGlobals and hiddenGlobals, with the functions that can do
// unbounded work in one call replaced by bounded ones (lua_strlib.go),
// os.time and os.date reading now (lua_os.go) and nothing else of os, no
// io, package or coroutine libraries, and a require that knows only kube. Every call gets its own state, so no script sees another's
// globals.
func newState(timeout time.Duration, now func() time.Time) (*lua.LState, error) {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       callStackSize,
		RegistrySize:        registrySize,
		RegistryMaxSize:     registryMaxSize,
		RegistryGrowStep:    registryGrowStep,
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
	for _, name := range hiddenGlobals {
		L.SetGlobal(name, lua.LNil)
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
	openOS(L, now)
	L.SetGlobal("require", L.NewFunction(requireKube))
	boundLibraries(L)
	b := newBudget(timeout)
	b.L = L
	L.SetContext(b)
	return L, nil
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

// compile parses and compiles a script once, named after its operation so
// errors say "<operation>:<line>:"; each call runs the compiled chunk in
// a fresh state.
func compile(operation, source string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(source), operation)
	if err != nil {
		return nil, err
	}
	return lua.Compile(chunk, operation)
}

// load runs a compiled script's top level in L and returns its global
// function fn.
func load(L *lua.LState, proto *lua.FunctionProto, fn string) (*lua.LFunction, error) {
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 0, nil); err != nil {
		return nil, err
	}
	f, ok := L.GetGlobal(fn).(*lua.LFunction)
	if !ok {
		return nil, fmt.Errorf("the script defines no function %s", fn)
	}
	return f, nil
}

// run runs a compiled script in a fresh state, calls its global function
// fn with args and returns nRet results as JSON-shaped Go values
// (map[string]any, []any, int64, float64, string, bool or nil). An empty
// Lua table comes back as an empty map (fixEmpty tells it from an empty
// array). The first argument is the object the call runs on; the budget
// is sized by the arguments (madeAllowance), and the deadline, timeout
// away for a small input, with it (callTimeout).
func run(s *script, timeout time.Duration, nRet int, args ...any) ([]any, error) {
	customization, operation, fn := s.customization, s.op.field, s.op.fn
	size, members := 0, 1
	for _, a := range args {
		size += inputSize(a)
		if list, ok := a.([]any); ok {
			members = max(members, len(list))
		}
	}
	allowed := madeAllowance(size, members)
	L, err := newState(callTimeout(timeout, allowed), s.clock())
	if err != nil {
		return nil, &scriptError{customization: customization, operation: operation, err: err}
	}
	defer L.Close()
	b := budgetOf(L)
	b.size(allowed, size)
	if len(args) > 0 {
		b.object = describe(args[0])
	}
	fail := func(err error) ([]any, error) {
		return nil, &scriptError{customization: customization, operation: operation, err: cleanLuaError(L, err)}
	}
	f, err := load(L, s.proto, fn)
	if err != nil {
		return fail(err)
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
	conv := newConversion()
	out := make([]any, nRet)
	for i := range out {
		v, err := conv.fromLua(L.Get(i+1), 0)
		if err != nil {
			return fail(fmt.Errorf("result %d of %s: %w", i+1, fn, err))
		}
		out[i] = v
	}
	return out, nil
}

// describe names the object a call runs on, as "apiVersion Kind
// namespace/name" (or "apiVersion Kind name"), for a budget's error.
func describe(v any) string {
	m, _ := v.(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	meta, _ := m["metadata"].(map[string]any)
	name := str(meta, "name")
	if ns := str(meta, "namespace"); ns != "" {
		name = ns + "/" + name
	}
	return strings.TrimSpace(str(m, "apiVersion") + " " + str(m, "kind") + " " + name)
}

// cleanLuaError keeps the message of a Lua error, whose first line already
// says "<operation>:<line>:", without gopher-lua's stack traceback. When
// L's budget ran out, the error is one (IsBudgetExceeded), whatever the
// script did with the first error a budget raised (pcall catches it; the
// next instruction raises it again).
func cleanLuaError(L *lua.LState, err error) error {
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) {
		msg := apiErr.Object.String()
		if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
			msg = msg[:i]
		}
		err = errors.New(msg)
	}
	if errors.Is(err, errBudget) {
		return err
	}
	if b, ok := L.Context().(*budget); ok && b.err != nil {
		return &exhausted{msg: err.Error()}
	}
	return err
}
