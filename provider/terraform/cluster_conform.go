package terraform

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
)

// memberAt is memberFromValue with diagnostics below at.
func memberAt(ctx context.Context, v attr.Value, at path.Path) (engine.Member, bool, bool, diag.Diagnostics) {
	tv, err := v.ToTerraformValue(ctx)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddAttributeError(at, "Invalid cluster", err.Error())
		return engine.Member{}, false, false, diags
	}
	return memberFromTerraform(ctx, tv, at)
}

// memberFromTerraform reads a flotilla_cluster value into the resource's
// model and converts it as the resource itself does.
func memberFromTerraform(ctx context.Context, tv tftypes.Value, at path.Path) (engine.Member, bool, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !tv.IsKnown() {
		return engine.Member{}, false, false, nil
	}
	if tv.IsNull() {
		diags.AddAttributeError(at, "Invalid cluster", "A cluster must not be null.")
		return engine.Member{}, false, false, diags
	}
	s := clusterResourceSchema()
	raw, err := conformValue(tv, clusterObjectType().TerraformType(ctx))
	if err != nil {
		diags.AddAttributeError(at, "Invalid cluster",
			fmt.Sprintf("Expected a flotilla_cluster resource, for example flotilla_cluster.east: %v.", err))
		return engine.Member{}, false, false, diags
	}
	var m clusterModel
	if diags.Append(tfsdk.State{Schema: s, Raw: raw}.Get(ctx, &m)...); diags.HasError() {
		return engine.Member{}, false, false, diags
	}
	return m.member(ctx, at)
}

// member validates the known parts of the model and converts it.
func (m clusterModel) member(ctx context.Context, at path.Path) (engine.Member, bool, bool, diag.Diagnostics) {
	diags := m.validate(ctx, at)
	facts, factsKnown, d := m.facts(ctx)
	diags.Append(d...)
	conn, connectionKnown, d := m.connection(ctx)
	diags.Append(d...)
	nameKnown := !m.Name.IsUnknown() && !m.Name.IsNull()
	out := engine.Member{Cluster: clusterOf(m.Name.ValueString(), facts)}
	if connectionKnown && !diags.HasError() {
		out.Connection = &conn
	}
	return out, connectionKnown, factsKnown && nameKnown, diags
}

// conform converts v to the type want the way Terraform's own type
// conversion would for a value written by hand: an object becomes a map or
// a smaller object gains its missing attributes as null, a tuple or set
// becomes a list. A value of exactly the type want (a flotilla_cluster
// reference) is returned as it is.
func conformValue(v tftypes.Value, want tftypes.Type) (tftypes.Value, error) {
	if v.Type().Equal(want) {
		return v, nil
	}
	if !v.IsKnown() {
		return tftypes.NewValue(want, tftypes.UnknownValue), nil
	}
	if v.IsNull() {
		return tftypes.NewValue(want, nil), nil
	}
	switch w := want.(type) {
	case tftypes.Object:
		var attrs map[string]tftypes.Value
		if !v.Type().Is(tftypes.Object{}) || v.As(&attrs) != nil {
			return tftypes.Value{}, fmt.Errorf("got %s, want an object", v.Type())
		}
		for name := range attrs {
			if _, ok := w.AttributeTypes[name]; !ok {
				return tftypes.Value{}, fmt.Errorf("unexpected attribute %q", name)
			}
		}
		out := make(map[string]tftypes.Value, len(w.AttributeTypes))
		for name, t := range w.AttributeTypes {
			a, ok := attrs[name]
			if !ok {
				out[name] = tftypes.NewValue(t, nil)
				continue
			}
			c, err := conformValue(a, t)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = c
		}
		return tftypes.NewValue(w, out), nil
	case tftypes.Map:
		var elems map[string]tftypes.Value
		if !v.Type().Is(tftypes.Object{}) && !v.Type().Is(tftypes.Map{}) || v.As(&elems) != nil {
			return tftypes.Value{}, fmt.Errorf("got %s, want a map", v.Type())
		}
		out := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			c, err := conformValue(e, w.ElementType)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("[%q]: %w", k, err)
			}
			out[k] = c
		}
		return tftypes.NewValue(w, out), nil
	case tftypes.List:
		elems, ok := tfElements(v)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("got %s, want a list", v.Type())
		}
		out := make([]tftypes.Value, len(elems))
		for i, e := range elems {
			c, err := conformValue(e, w.ElementType)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = c
		}
		return tftypes.NewValue(w, out), nil
	}
	return tftypes.Value{}, fmt.Errorf("got %s, want %s", v.Type(), want)
}

// tfElements returns the elements of a list, set or tuple value.
func tfElements(v tftypes.Value) ([]tftypes.Value, bool) {
	t := v.Type()
	if !slices.ContainsFunc([]tftypes.Type{tftypes.List{}, tftypes.Set{}, tftypes.Tuple{}}, t.Is) {
		return nil, false
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, false
	}
	return elems, true
}
