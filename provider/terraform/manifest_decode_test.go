package terraform

import (
	"context"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// rawManifestType is flotilla_manifest's raw object type.
func rawManifestType(t *testing.T) tftypes.Object {
	t.Helper()
	var sr resource.SchemaResponse
	newManifestResource().Schema(context.Background(), resource.SchemaRequest{}, &sr)
	return sr.Schema.Type().TerraformType(context.Background()).(tftypes.Object)
}

// rawManifest is a flotilla_manifest value with attrs set, every other
// attribute null.
func rawManifest(t *testing.T, attrs map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	typ := rawManifestType(t)
	all := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		all[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range attrs {
		if _, ok := all[name]; !ok {
			t.Fatalf("flotilla_manifest has no attribute %q", name)
		}
		all[name] = v
	}
	return tftypes.NewValue(typ, all)
}

// rawObject is a JSON object as Terraform passes a manifest.
func rawObject(t *testing.T, obj map[string]any) tftypes.Value {
	t.Helper()
	v, err := rawFromJSON(obj)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// rawOneCluster is a clusters value of one flotilla_cluster named name, whose
// host is not known yet.
func rawOneCluster(name string) tftypes.Value {
	typ := clusterObjectType().TerraformType(context.Background()).(tftypes.Object)
	attrs := map[string]tftypes.Value{}
	for n, at := range typ.AttributeTypes {
		attrs[n] = tftypes.NewValue(at, nil)
	}
	attrs["name"] = tftypes.NewValue(tftypes.String, name)
	attrs["id"] = tftypes.NewValue(tftypes.String, name)
	attrs["host"] = tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	return tftypes.NewValue(tftypes.Tuple{ElementTypes: []tftypes.Type{typ}}, []tftypes.Value{tftypes.NewValue(typ, attrs)})
}

func rawStringMap(elems map[string]string) tftypes.Value {
	out := map[string]tftypes.Value{}
	for k, v := range elems {
		out[k] = tftypes.NewValue(tftypes.String, v)
	}
	return tftypes.NewValue(renderedType, out)
}

// TestDecodeManifest checks that each RPC's request decodes to the inputs
// from the right value (plan with the configuration's write-only fleet,
// else configuration, else state), the recorded id settling the scope, and
// the records of plan and state read without parsing rendered.
func TestDecodeManifest(t *testing.T) {
	t.Parallel()
	web := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}
	widget := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"}}
	null := tftypes.Value{}
	type want struct {
		template   string // api.TemplateRef of in.template; "" for none
		known      bool
		scopeOpen  bool
		members    []string
		hasState   bool
		planned    map[string]int64
		recorded   map[string]int64
		rendered   []string // recorded.renderedClusters
		errSummary string   // the first error's summary; "" for none
	}
	tests := []struct {
		name                string
		config, plan, state func(t *testing.T) tftypes.Value
		want                want
	}{{
		name: "ValidateConfig: the configuration alone, the namespace defaulted",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web)})
		},
		want: want{template: "apps/v1, Kind=Deployment, default/web", known: true},
	}, {
		name: "plan: the write-only clusters come from the configuration",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web), attrClusters: rawOneCluster("east")})
		},
		plan: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web), attrPlacement: placementValue(map[string]int64{"east": 2})})
		},
		want: want{template: "apps/v1, Kind=Deployment, default/web", known: true, members: []string{"east"}, planned: map[string]int64{"east": 2}},
	}, {
		name: "plan over state: the recorded id settles an unknown kind's namespace",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, widget)})
		},
		plan: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, widget)})
		},
		state: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{
				attrManifest: rawObject(t, widget), attrID: tftypes.NewValue(tftypes.String, "example.com/v1, Kind=Widget, team/w1"),
				attrPlacement: placementValue(map[string]int64{"east": 1, "west": 1}),
				attrRendered:  rawStringMap(map[string]string{"east": "{}", "west": "not JSON: rendered is not parsed"}),
			})
		},
		want: want{template: "example.com/v1, Kind=Widget, team/w1", known: true, hasState: true,
			recorded: map[string]int64{"east": 1, "west": 1}, rendered: []string{"east", "west"}},
	}, {
		name: "a new unknown kind without a namespace stays open for discovery",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, widget)})
		},
		want: want{template: "example.com/v1, Kind=Widget, w1", known: true, scopeOpen: true},
	}, {
		name: "Read: the inputs come from the state",
		state: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web), attrRendered: rawStringMap(map[string]string{"east": "{}"})})
		},
		want: want{template: "apps/v1, Kind=Deployment, default/web", known: true, hasState: true, rendered: []string{"east"}},
	}, {
		name: "an unknown manifest is not known, with no error",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: tftypes.NewValue(tftypes.DynamicPseudoType, tftypes.UnknownValue)})
		},
		want: want{known: false},
	}, {
		name: "a manifest without a kind is an error naming the field",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "x"}})})
		},
		want: want{known: true, errSummary: "Invalid manifest"},
	}, {
		name: "a placement that cannot be read is an error naming the state",
		config: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web)})
		},
		plan: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{attrManifest: rawObject(t, web)})
		},
		state: func(t *testing.T) tftypes.Value {
			return rawManifest(t, map[string]tftypes.Value{
				attrManifest: rawObject(t, web),
				attrPlacement: tftypes.NewValue(placementType, map[string]tftypes.Value{
					"east": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue), "west": tftypes.NewValue(tftypes.Number, big.NewFloat(1)),
				}),
			})
		},
		want: want{template: "apps/v1, Kind=Deployment, default/web", known: true, hasState: true, errSummary: "Cannot read the placement of the state"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			value := func(f func(t *testing.T) tftypes.Value) tftypes.Value {
				if f == nil {
					return null
				}
				return f(t)
			}
			m, diags := decodeManifest(value(tc.config), value(tc.plan), value(tc.state))
			got := want{known: m.in.known, scopeOpen: m.in.scopeOpen, hasState: m.hasState,
				planned: m.planned.placement, recorded: m.recorded.placement}
			if m.in.template != nil {
				got.template = api.TemplateRefOf(m.in.template).String()
			}
			for _, mem := range m.in.fleet.Members {
				got.members = append(got.members, mem.Cluster.Name)
			}
			if m.hasState {
				got.rendered = m.recorded.renderedClusters()
			}
			if diags.HasError() {
				got.errSummary = diags.Errors()[0].Summary()
			}
			if tc.want.rendered == nil && len(got.rendered) == 0 {
				got.rendered = nil
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("decodeManifest (-want +got):\n%s\n%v", diff, diags)
			}
		})
	}
}

// TestDependencyClusters checks where a record says each dependency runs,
// from the JSON's keys alone, and that a record whose lists disagree says
// nothing.
func TestDependencyClusters(t *testing.T) {
	t.Parallel()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg", "namespace": "app"}}
	deps := func(objs ...map[string]any) tftypes.Value {
		elems := make([]any, len(objs))
		for i, o := range objs {
			elems[i] = o
		}
		v, err := rawFromJSON(elems)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rendered := func(maps ...tftypes.Value) tftypes.Value { return tftypes.NewValue(dependenciesRenderedType, maps) }
	tests := []struct {
		name string
		rec  manifestRecord
		want map[string][]string
	}{
		{"one dependency in two clusters", manifestRecord{dependencies: deps(cm), dependenciesRendered: rendered(rawStringMap(map[string]string{"west": "x", "east": "y"}))},
			map[string][]string{"v1, Kind=ConfigMap, app/cfg": {"east", "west"}}},
		{"no dependencies", manifestRecord{dependencies: tftypes.NewValue(tftypes.DynamicPseudoType, nil), dependenciesRendered: tftypes.NewValue(dependenciesRenderedType, nil)},
			map[string][]string{}},
		{"lists that disagree say nothing", manifestRecord{dependencies: deps(cm), dependenciesRendered: rendered()}, map[string][]string{}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.rec.dependencyClusters()); diff != "" {
			t.Errorf("%s: dependencyClusters (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestKeepClusters checks that apply keeps the applied clusters' rendered
// JSON byte for byte, drops the others, and records null as no cluster.
func TestKeepClusters(t *testing.T) {
	t.Parallel()
	in := rawStringMap(map[string]string{"east": `{"a":"\u003c1"}`, "west": `{"b":2}`})
	tests := []struct {
		name     string
		rendered tftypes.Value
		keep     map[string]bool
		want     tftypes.Value
	}{
		{"keeps the applied, as they are", in, map[string]bool{"east": true}, rawStringMap(map[string]string{"east": `{"a":"\u003c1"}`})},
		{"none applied", in, map[string]bool{}, rawStringMap(map[string]string{})},
		{"null", tftypes.NewValue(renderedType, nil), map[string]bool{"east": true}, rawStringMap(map[string]string{})},
	}
	for _, tc := range tests {
		if got := keepClusters(tc.rendered, tc.keep); !got.Equal(tc.want) {
			t.Errorf("%s: keepClusters = %v, want %v", tc.name, got, tc.want)
		}
	}
}
