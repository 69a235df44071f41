package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestRawFromJSON checks that the raw conversion gives exactly the value
// the framework conversion gives, so state written by either compares equal.
func TestRawFromJSON(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`null`, `"a"`, `true`, `3`, `-2.5`, `12345678901234567890`, `[]`, `{}`,
		`[1, "a", null, {"b": [true]}]`,
		`{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"a": "b"}},
		  "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}}`,
	} {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		want, err := valueFromJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		wantRaw, err := want.ToTerraformValue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got, err := rawFromJSON(v)
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !got.Equal(wantRaw) {
			t.Errorf("%s: rawFromJSON = %s, want %s", doc, got, wantRaw)
		}
	}
	if _, err := rawFromJSON(map[string]any{"a": 1}); err == nil {
		t.Error("an int (not int64) was accepted; valueFromJSON refuses it")
	}
}

// TestDecodeCache checks that the fleet is decoded by content: equal values
// give equal results from one decoding, different values their own, and a
// caller changing what it got does not change what the next caller gets.
func TestDecodeCache(t *testing.T) {
	t.Parallel()
	c := &decodeCache{}
	east, west := benchClusters(1), benchClusters(2)
	m1, known, diags := c.members(east)
	if !known || diags.HasError() || len(m1) != 1 {
		t.Fatalf("members = %v, known %v, %v", m1, known, diags)
	}
	m1[0].Cluster.Name = "changed by the caller"
	m2, _, _ := c.members(benchClusters(1))
	if m2[0].Cluster.Name != "member1" {
		t.Errorf("second decode of the same value = %q, want member1", m2[0].Cluster.Name)
	}
	m3, _, _ := c.members(west)
	if len(m3) != 2 {
		t.Errorf("a different value gave %d members, want 2", len(m3))
	}
	if n := len(c.memberTable.entries); n != 2 {
		t.Errorf("cache holds %d entries, want 2", n)
	}

	pp := tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{benchPolicy(t, 1).Type()}}, []tftypes.Value{benchPolicy(t, 1)})
	p1, known, diags := c.policies(pp, attrPropagationPolicies)
	if !known || diags.HasError() || len(p1) != 1 || p1[0].Name != "app1" {
		t.Fatalf("policies = %v, known %v, %v", p1, known, diags)
	}
	// The same value under another attribute is decoded for that attribute,
	// so its diagnostics name the right path.
	if _, _, _ = c.policies(pp, attrOverridePolicies); len(c.policyTable.entries) != 2 {
		t.Errorf("cache holds %d policy entries, want 2", len(c.policyTable.entries))
	}
}

// benchClusters is a clusters value of n flotilla_cluster resources whose
// host is not known yet, so that planning needs no member.
func benchClusters(n int) tftypes.Value {
	typ := clusterObjectType().TerraformType(context.Background()).(tftypes.Object)
	elems := make([]tftypes.Value, n)
	types := make([]tftypes.Type, n)
	for i := range elems {
		attrs := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			attrs[name] = tftypes.NewValue(at, nil)
		}
		attrs["name"] = tftypes.NewValue(tftypes.String, fmt.Sprintf("member%d", i+1))
		attrs["id"] = tftypes.NewValue(tftypes.String, fmt.Sprintf("member%d", i+1))
		attrs["region"] = tftypes.NewValue(tftypes.String, fmt.Sprintf("region-%d", (i+1)%3))
		attrs["host"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
		attrs["token"] = tftypes.NewValue(tftypes.String, "token")
		elems[i], types[i] = tftypes.NewValue(typ, attrs), typ
	}
	return tftypes.NewValue(tftypes.Tuple{ElementTypes: types}, elems)
}

// benchPolicy is scripts/bench-terraform.sh's propagation policy for app i:
// divided, member1 weighted 2, the others 1.
func benchPolicy(t testing.TB, i int) tftypes.Value {
	name := fmt.Sprintf("app%d", i)
	return policySpecValue(t, propagationPolicyKind, "bench", name, api.PropagationSpec{
		ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
		Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: api.ReplicaSchedulingTypeDivided,
			WeightPreference: &api.ClusterPreferences{StaticWeightList: []api.StaticClusterWeight{
				{TargetCluster: api.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 2},
				{TargetCluster: api.ClusterAffinity{ExcludeClusters: []string{"member1"}}, Weight: 1},
			}},
		}},
	})
}

// benchOverride is the bench's override policy for app i: member2 pulls
// from a regional registry.
func benchOverride(t testing.TB, i int) tftypes.Value {
	name := fmt.Sprintf("app%d", i)
	return policySpecValue(t, overridePolicyKind, "bench", name, api.OverrideSpec{
		ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
		OverrideRules: []api.RuleWithCluster{{
			TargetCluster: &api.ClusterAffinity{ClusterNames: []string{"member2"}},
			Overriders: api.Overriders{ImageOverrider: []api.ImageOverrider{{
				Component: api.Registry, Operator: api.OverriderOpReplace, Value: "registry.eu.example.com",
			}}},
		}},
	})
}

// benchManifestConfig is flotilla_manifest's configuration for app i of
// the bench, with every other attribute null.
func benchManifestConfig(t testing.TB, typ tftypes.Object, i int, clusters tftypes.Value) tftypes.Value {
	name := fmt.Sprintf("app%d", i)
	manifest, err := rawFromJSON(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": "bench"},
		"spec": map[string]any{
			"replicas": int64(20),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tuple := func(v tftypes.Value) tftypes.Value {
		return tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{v.Type()}}, []tftypes.Value{v})
	}
	attrs := map[string]tftypes.Value{}
	for n, at := range typ.AttributeTypes {
		attrs[n] = tftypes.NewValue(at, nil)
	}
	attrs[attrManifest] = manifest
	attrs[attrClusters] = clusters
	attrs[attrPropagationPolicies] = tuple(benchPolicy(t, i))
	attrs[attrOverridePolicies] = tuple(benchOverride(t, i))
	attrs["wait_for_rollout"] = tftypes.NewValue(tftypes.Bool, false)
	return tftypes.NewValue(typ, attrs)
}

// BenchmarkManifestPlan measures what the provider process does for one
// flotilla_manifest of scripts/bench-terraform.sh (10 clusters, a weighted
// policy, an override) through the plugin protocol, framework included:
// validate and plan a new manifest, then plan it again over its own state
// (a no-change plan). Members are planned from their declared facts (the
// host is unknown), so no member is contacted.
func BenchmarkManifestPlan(b *testing.B) {
	ctx := context.Background()
	server, err := providerserver.NewProtocol6WithError(New("bench")())()
	if err != nil {
		b.Fatal(err)
	}
	var sr resource.SchemaResponse
	newManifestResource().Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	providerType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"fleet": tftypes.String, "field_manager": tftypes.String, "apply_parallelism": tftypes.Number, "default_timeout": tftypes.String,
	}}
	providerConfig, err := tfprotov6.NewDynamicValue(providerType, tftypes.NewValue(providerType, map[string]tftypes.Value{
		"fleet": tftypes.NewValue(tftypes.String, "bench"), "field_manager": tftypes.NewValue(tftypes.String, nil),
		"apply_parallelism": tftypes.NewValue(tftypes.Number, nil), "default_timeout": tftypes.NewValue(tftypes.String, nil),
	}))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	cr, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &providerConfig})
	if err != nil || diagsHaveError(cr.Diagnostics) {
		b.Fatalf("configure: %v %v", err, cr.Diagnostics)
	}
	config := benchManifestConfig(b, typ, 1, benchClusters(10))
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(typ, v)
		if err != nil {
			b.Fatal(err)
		}
		return &d
	}
	null := dv(tftypes.NewValue(typ, nil))
	plan := func(prior *tfprotov6.DynamicValue) *tfprotov6.PlanResourceChangeResponse {
		vr, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "flotilla_manifest", Config: dv(config)})
		if err != nil || diagsHaveError(vr.Diagnostics) {
			b.Fatalf("validate: %v %v", err, vr.Diagnostics)
		}
		proposed := config
		if prior != null {
			proposed = b2v(b, typ, prior)
		}
		pr, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
			TypeName: "flotilla_manifest", PriorState: prior, ProposedNewState: dv(proposed), Config: dv(config),
		})
		if err != nil || diagsHaveError(pr.Diagnostics) {
			b.Fatalf("plan: %v %v", err, pr.Diagnostics)
		}
		return pr
	}
	// The state after apply: the plan, with a status.
	planned := b2v(b, typ, plan(null).PlannedState)
	status, err := rawFromJSON(map[string]any{"health": "Unknown", "clusters": map[string]any{}, "aggregated": map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	planned, err = withAttributes(planned, map[string]tftypes.Value{attrStatus: status})
	if err != nil {
		b.Fatal(err)
	}
	state := dv(planned)
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			plan(null)
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if pr := plan(state); !b2v(b, typ, pr.PlannedState).Equal(planned) {
				b.Fatal("a plan over unchanged state changed something")
			}
		}
	})
}

func b2v(tb testing.TB, typ tftypes.Type, d *tfprotov6.DynamicValue) tftypes.Value {
	v, err := d.Unmarshal(typ)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func diagsHaveError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}
