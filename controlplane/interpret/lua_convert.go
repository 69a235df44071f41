package interpret

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds how deeply nested a script's result may be, so a table
// that contains itself is an error rather than a hang.
const maxDepth = 100

// toLua turns a JSON-shaped Go value into a Lua value: objects and arrays
// become tables (arrays indexed from 1), numbers LNumber.
func toLua(L *lua.LState, v any) (lua.LValue, error) {
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			lv, err := toLua(L, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t.RawSetString(k, lv)
		}
		return t, nil
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			lv, err := toLua(L, e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			t.Append(lv)
		}
		return t, nil
	case string:
		return lua.LString(x), nil
	case bool:
		return lua.LBool(x), nil
	case int64:
		return lua.LNumber(x), nil
	case int32:
		return lua.LNumber(x), nil
	case int:
		return lua.LNumber(x), nil
	case float64:
		return lua.LNumber(x), nil
	}
	return nil, fmt.Errorf("unsupported value of type %T", v)
}

// conversion counts what fromLua converts, so a result built from shared
// tables (t = {t, t} thirty times is a billion leaves) is refused once it
// has cost ConversionBudget values or MemoryBudget bytes of strings,
// rather than copied: a table reached twice is copied, and counted, twice.
type conversion struct {
	values, bytes int
}

func newConversion() *conversion { return &conversion{} }

// count charges one value of n bytes.
func (c *conversion) count(n int) error {
	c.values++
	c.bytes += n
	switch {
	case c.values > ConversionBudget:
		return fmt.Errorf("%w: more than %d values to convert (tables shared many times?)", errBudget, ConversionBudget)
	case c.bytes > MemoryBudget:
		return fmt.Errorf("%w: more than %d bytes of strings to convert", errBudget, MemoryBudget)
	}
	return nil
}

// fromLua turns a script's result into a JSON-shaped Go value. A table
// whose keys are 1..n is an array, one with string keys an object; an
// empty table is an empty object (fixEmpty decides with a reference). A
// whole number is int64, as the apiserver's decoder reads JSON.
func (c *conversion) fromLua(v lua.LValue, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels (a table that contains itself?)", maxDepth)
	}
	size := 0
	if s, ok := v.(lua.LString); ok {
		size = len(s)
	}
	if err := c.count(size); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %v is not valid JSON", f)
		}
		if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return c.tableFromLua(x, depth)
	}
	return nil, fmt.Errorf("a %s cannot be returned", v.Type())
}

func (c *conversion) tableFromLua(t *lua.LTable, depth int) (any, error) {
	n := t.MaxN()
	count, strKeys := 0, 0
	var bad lua.LValue
	var err error
	t.ForEach(func(k, _ lua.LValue) {
		count++
		switch k := k.(type) {
		case lua.LString:
			strKeys++
			if err == nil {
				err = c.count(len(k))
			}
		case lua.LNumber:
			if err == nil {
				err = c.count(0)
			}
		default:
			bad = k
		}
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, fmt.Errorf("a table key of type %s cannot be returned", bad.Type())
	}
	if count == 0 {
		return map[string]any{}, nil
	}
	if strKeys == 0 && n == count {
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			e, err := c.fromLua(t.RawGetInt(i), depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i-1, err)
			}
			out = append(out, e)
		}
		return out, nil
	}
	if strKeys != count {
		return nil, fmt.Errorf("a table mixes array and object keys")
	}
	out := make(map[string]any, count)
	t.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		var e any
		if e, err = c.fromLua(v, depth+1); err != nil {
			err = fmt.Errorf("%s: %w", k, err)
			return
		}
		if e != nil {
			out[string(k.(lua.LString))] = e
		}
	})
	return out, err
}

// emptyPaths lists where reference values hold an empty array and an empty
// object, by dotted key path (array positions left out).
func emptyPaths(v any, at []string, arrays, objects map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			objects[strings.Join(at, ".")] = true
		}
		for k, e := range x {
			emptyPaths(e, append(at, k), arrays, objects)
		}
	case []any:
		if len(x) == 0 {
			arrays[strings.Join(at, ".")] = true
		}
		for _, e := range x {
			emptyPaths(e, at, arrays, objects)
		}
	}
}

// fixEmpty resolves what Lua cannot tell apart, an empty object from an
// empty array, as Karmada does: an empty table where a reference (the
// objects the script was given) has an empty array becomes [], where it
// has an empty object stays {}, and elsewhere is dropped. The result's top
// level stays as it is.
func fixEmpty(v any, refs ...any) any {
	arrays, objects := map[string]bool{}, map[string]bool{}
	for _, r := range refs {
		emptyPaths(r, nil, arrays, objects)
	}
	var walk func(v any, at []string) (any, bool)
	walk = func(v any, at []string) (any, bool) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && len(at) > 0 {
				p := strings.Join(at, ".")
				switch {
				case arrays[p]:
					return []any{}, true
				case objects[p]:
					return x, true
				}
				return nil, false
			}
			for k, e := range x {
				if fixed, keep := walk(e, append(at, k)); keep {
					x[k] = fixed
				} else {
					delete(x, k)
				}
			}
		case []any:
			kept := x[:0]
			for _, e := range x {
				if fixed, keep := walk(e, at); keep {
					kept = append(kept, fixed)
				}
			}
			return kept, true
		}
		return v, true
	}
	out, _ := walk(v, nil)
	return out
}
