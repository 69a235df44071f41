package terraform

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// policyObjectValue is the framework value of a resource value, as another
// resource receives it.
func policyObjectValue(t *testing.T, k policyKind, v tftypes.Value) attr.Value {
	t.Helper()
	o, err := k.schema().Type().ValueFromTerraform(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// policyWithValue returns v with the value at p replaced by a.
func policyWithValue(t *testing.T, v tftypes.Value, p *tftypes.AttributePath, a tftypes.Value) tftypes.Value {
	t.Helper()
	out, err := tftypes.Transform(v, func(at *tftypes.AttributePath, old tftypes.Value) (tftypes.Value, error) {
		if at.Equal(p) {
			return a, nil
		}
		return old, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// policyAttrPath is the tftypes path of attribute names and list indexes.
func policyAttrPath(steps ...any) *tftypes.AttributePath {
	p := tftypes.NewAttributePath()
	for _, s := range steps {
		switch s := s.(type) {
		case string:
			p = p.WithAttributeName(s)
		case int:
			p = p.WithElementKeyInt(s)
		}
	}
	return p
}

func policyDiagsText(d diag.Diagnostics) string {
	var b strings.Builder
	for _, e := range d {
		b.WriteString(e.Summary() + ": " + e.Detail() + "\n")
	}
	return b.String()
}

// TestPolicyDecodeReportsOnce checks that a value the schema validators
// reject is not reported a second time by Karmada's validation when the
// value is the resource's own configuration, and is reported otherwise.
func TestPolicyDecodeReportsOnce(t *testing.T) {
	weightZero := richPropagationSpec()
	weightZero.Placement.ClusterAffinities = nil
	weightZero.Placement.ReplicaScheduling.WeightPreference = &api.ClusterPreferences{StaticWeightList: []api.StaticClusterWeight{
		{TargetCluster: api.ClusterAffinity{ClusterNames: []string{"east"}}, Weight: 0},
	}}
	badEnum := richPropagationSpec()
	badEnum.ConflictResolution = "Replace"
	cases := map[string]struct {
		kind  policyKind
		value tftypes.Value
		want  string
	}{
		"weight 0": {propagationPolicyKind, policySpecValue(t, propagationPolicyKind, "default", "web", weightZero),
			"placement.replica_scheduling.weight_preference.static_weight_list[0].weight: Invalid value: 0: must be greater than or equal to 1"},
		"bad enum": {propagationPolicyKind, policySpecValue(t, propagationPolicyKind, "default", "web", badEnum),
			`conflict_resolution: Unsupported value: "Replace"`},
		"bad JSON": {overridePolicyKind, policyWithValue(t, policySpecValue(t, overridePolicyKind, "default", "eu", richOverrideSpec()),
			policyAttrPath("override_rules", 0, "overriders", "plaintext", 0, "value"), tftypes.NewValue(tftypes.String, "{oops")),
			"override_rules[0].overriders.plaintext[0].value: must hold valid JSON"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, diags := tc.kind.decode(tc.value, path.Empty(), true)
			if p != nil || len(diags) != 0 {
				t.Errorf("schema-checked: want no policy and no diagnostics (the schema reports it), got %v:\n%s", p, policyDiagsText(diags))
			}
			p, diags = tc.kind.decode(tc.value, path.Empty(), false)
			if p != nil || len(diags) != 1 || !strings.Contains(diags[0].Detail(), tc.want) {
				t.Errorf("not schema-checked: want one diagnostic %q, got:\n%s", tc.want, policyDiagsText(diags))
			}
		})
	}
}

func TestPoliciesFromValue(t *testing.T) {
	ctx := context.Background()
	web := policySpecValue(t, propagationPolicyKind, "default", "web", richPropagationSpec())
	dbg := policySpecValue(t, clusterOverridePolicyKind, "", "debug", richOverrideSpec())
	tuple := func(vs ...attr.Value) attr.Value {
		typs := make([]attr.Type, len(vs))
		for i, v := range vs {
			typs[i] = v.Type(ctx)
		}
		tv, d := types.TupleValue(typs, vs)
		if d.HasError() {
			t.Fatal(d)
		}
		return types.DynamicValue(tv)
	}
	at := path.Root("policies")

	t.Run("mixed kinds", func(t *testing.T) {
		ps, known, diags := policiesFromValue(ctx, tuple(policyObjectValue(t, propagationPolicyKind, web), policyObjectValue(t, clusterOverridePolicyKind, dbg)), at)
		if diags.HasError() || !known || len(ps) != 2 {
			t.Fatalf("known=%v, %d policies:\n%s", known, len(ps), policyDiagsText(diags))
		}
		if ps[0].Kind != api.KindPropagationPolicy || ps[0].Namespace != "default" || ps[0].Name != "web" || ps[0].Propagation == nil {
			t.Errorf("first policy: %+v", ps[0])
		}
		if ps[0].Propagation.SchedulerName != api.DefaultSchedulerName {
			t.Errorf("want Karmada's defaults applied, got scheduler %q", ps[0].Propagation.SchedulerName)
		}
		if ps[1].Kind != api.KindClusterOverridePolicy || ps[1].Namespace != "" || ps[1].Override == nil {
			t.Errorf("second policy: %+v", ps[1])
		}
		var f plan.Fleet
		for _, p := range ps {
			p.addTo(&f)
		}
		if len(f.PropagationPolicies) != 1 || len(f.ClusterOverridePolicies) != 1 ||
			f.PropagationPolicies[0].Kind != api.KindPropagationPolicy || f.PropagationPolicies[0].Namespace != "default" ||
			f.ClusterOverridePolicies[0].Name != "debug" {
			t.Errorf("fleet: %+v", f)
		}
	})

	t.Run("one policy", func(t *testing.T) {
		p, known, diags := policyFromValue(ctx, types.DynamicValue(policyObjectValue(t, clusterOverridePolicyKind, dbg)), at)
		if diags.HasError() || !known || p == nil || p.Kind != api.KindClusterOverridePolicy || p.Name != "debug" {
			t.Fatalf("got %+v known=%v:\n%s", p, known, policyDiagsText(diags))
		}
		if len(p.Override.OverrideRules) != 2 {
			t.Errorf("want 2 override rules, got %d", len(p.Override.OverrideRules))
		}
	})

	t.Run("unknown", func(t *testing.T) {
		unknownName := policyWithValue(t, web, policyAttrPath(attrName), tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
		ps, known, diags := policiesFromValue(ctx, tuple(policyObjectValue(t, propagationPolicyKind, unknownName), policyObjectValue(t, clusterOverridePolicyKind, dbg)), at)
		if known || ps != nil || len(diags) != 0 {
			t.Errorf("want not known, no policies and no diagnostics; got known=%v %v %s", known, ps, policyDiagsText(diags))
		}
		if _, known, _ := policiesFromValue(ctx, types.DynamicUnknown(), at); known {
			t.Error("an unknown list must not be known")
		}
	})

	t.Run("errors name the element", func(t *testing.T) {
		invalid := policyWithValue(t, web, policyAttrPath("priority"), tftypes.NewValue(tftypes.Number, 1<<40))
		badKind := policyWithValue(t, dbg, policyAttrPath(attrKind), tftypes.NewValue(tftypes.String, "Deployment"))
		cases := []struct {
			list attr.Value
			path string
			want string
		}{
			{tuple(types.StringValue("web")), "policies[0]", "Expected a flotilla policy resource"},
			{tuple(policyObjectValue(t, propagationPolicyKind, web), policyObjectValue(t, clusterOverridePolicyKind, badKind)), "policies[1].kind", `Unknown policy kind "Deployment"`},
			{tuple(policyObjectValue(t, propagationPolicyKind, invalid)), "policies[0].priority", "1099511627776 is out of range [-2147483648, 2147483647]"},
			{types.DynamicValue(types.StringValue("x")), "policies", "Expected a list"},
			{tuple(types.ObjectValueMust(map[string]attr.Type{"kind": types.StringType}, map[string]attr.Value{"kind": types.StringValue("OverridePolicy")})),
				"policies[0].name", "The name must be a string"},
		}
		for _, tc := range cases {
			ps, _, diags := policiesFromValue(ctx, tc.list, at)
			if ps != nil || !diags.HasError() {
				t.Errorf("%s: want an error, got %v", tc.path, ps)
				continue
			}
			d, ok := diags[0].(diag.DiagnosticWithPath)
			if !ok || d.Path().String() != tc.path || !strings.Contains(d.Detail(), tc.want) {
				t.Errorf("want %q at %s, got:\n%s", tc.want, tc.path, policyDiagsText(diags))
			}
		}
	})
}
