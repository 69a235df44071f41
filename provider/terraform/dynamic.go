package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// valueFromJSON converts a decoded JSON value (decoded with UseNumber) into a
// Terraform value. Objects become object values and arrays become tuples, so
// that every element keeps its own type, as Terraform's own yamldecode does.
// A JSON null becomes a null string: Terraform values need a concrete type.
func valueFromJSON(v any) (attr.Value, error) {
	switch t := v.(type) {
	case nil:
		return types.StringNull(), nil
	case string:
		return types.StringValue(t), nil
	case bool:
		return types.BoolValue(t), nil
	case json.Number:
		f, _, err := big.ParseFloat(t.String(), 10, 512, big.ToNearestEven)
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", t.String(), err)
		}
		return types.NumberValue(f), nil
	case float64:
		return types.NumberValue(big.NewFloat(t)), nil
	case int64:
		return types.NumberValue(new(big.Float).SetInt64(t)), nil
	case []any:
		elems := make([]attr.Value, len(t))
		elemTypes := make([]attr.Type, len(t))
		for i, e := range t {
			ev, err := valueFromJSON(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i], elemTypes[i] = ev, ev.Type(context.Background())
		}
		tv, diags := types.TupleValue(elemTypes, elems)
		if diags.HasError() {
			return nil, fmt.Errorf("tuple: %s", diags[0].Detail())
		}
		return tv, nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		attrs := make(map[string]attr.Value, len(t))
		attrTypes := make(map[string]attr.Type, len(t))
		for _, k := range keys {
			ev, err := valueFromJSON(t[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			attrs[k], attrTypes[k] = ev, ev.Type(context.Background())
		}
		ov, diags := types.ObjectValue(attrTypes, attrs)
		if diags.HasError() {
			return nil, fmt.Errorf("object: %s", diags[0].Detail())
		}
		return ov, nil
	default:
		return nil, fmt.Errorf("unsupported value of type %T", v)
	}
}

// errUnknown is returned by jsonFromTerraform for a value that is not known yet.
var errUnknown = errors.New("value is not known yet")

// jsonFromTerraform converts a Terraform value (an object, list, tuple,
// map, string, number, bool or null, possibly inside a Dynamic) into the
// JSON shape that Kubernetes objects have. Integral numbers become int64,
// others float64. It fails with errUnknown while any part is unknown.
func jsonFromTerraform(tv tftypes.Value) (any, error) {
	if !tv.IsKnown() {
		return nil, errUnknown
	}
	if tv.IsNull() {
		return nil, nil
	}
	typ := tv.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		err := tv.As(&s)
		return s, err
	case typ.Is(tftypes.Bool):
		var b bool
		err := tv.As(&b)
		return b, err
	case typ.Is(tftypes.Number):
		f := new(big.Float)
		if err := tv.As(&f); err != nil {
			return nil, err
		}
		if f.IsInt() {
			if i, acc := f.Int64(); acc == big.Exact {
				return i, nil
			}
		}
		n, _ := f.Float64()
		return n, nil
	case typ.Is(tftypes.Object{}) || typ.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := tv.As(&m); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			j, err := jsonFromTerraform(e)
			if err != nil {
				if errors.Is(err, errUnknown) {
					return nil, err
				}
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = j
		}
		return out, nil
	case typ.Is(tftypes.List{}) || typ.Is(tftypes.Set{}) || typ.Is(tftypes.Tuple{}):
		var l []tftypes.Value
		if err := tv.As(&l); err != nil {
			return nil, err
		}
		out := make([]any, len(l))
		for i, e := range l {
			j, err := jsonFromTerraform(e)
			if err != nil {
				if errors.Is(err, errUnknown) {
					return nil, err
				}
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value of type %s", typ)
}
