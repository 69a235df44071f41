package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestPlaintextOverrider(t *testing.T) {
	add, rm, rep := api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace
	cases := map[string]struct {
		obj    *unstructured.Unstructured
		ops    []api.PlaintextOverrider
		fields []string
		want   any
	}{
		"replace a number": {
			obj:    apitest.MakeDeployment("web", "default").Replicas(3).Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/spec/replicas", Operator: rep, Value: rawJSON(t, 5)}},
			fields: []string{"spec", "replicas"}, want: int64(5),
		},
		"add an object": {
			obj:    apitest.MakeDeployment("web", "default").Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/spec/template/spec/nodeSelector", Operator: add, Value: rawJSON(t, map[string]string{"disk": "ssd"})}},
			fields: []string{"spec", "template", "spec", "nodeSelector"}, want: map[string]any{"disk": "ssd"},
		},
		"add to end of list": {
			obj:    apitest.MakeDeployment("web", "default").Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/spec/template/spec/containers/-", Operator: add, Value: rawJSON(t, map[string]string{"name": "x", "image": "x"})}},
			fields: []string{"spec", "template", "spec", "containers"},
			want:   []any{map[string]any{"name": "app", "image": "nginx"}, map[string]any{"name": "x", "image": "x"}},
		},
		"remove": {
			obj:    apitest.MakeDeployment("web", "default").Label("drop", "me").Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/metadata/labels/drop", Operator: rm}},
			fields: []string{"metadata", "labels"}, want: map[string]any{},
		},
		"add without value sets null": {
			obj:    apitest.MakeConfigMap("cm", "default").Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/data", Operator: add}},
			fields: []string{"data"}, want: nil,
		},
		"operations apply in order": {
			obj: apitest.MakeConfigMap("cm", "default").Obj(),
			ops: []api.PlaintextOverrider{
				{Path: "/data", Operator: add, Value: rawJSON(t, map[string]string{})},
				{Path: "/data/k", Operator: add, Value: rawJSON(t, "1")},
				{Path: "/data/k", Operator: rep, Value: rawJSON(t, "2")},
			},
			fields: []string{"data"}, want: map[string]any{"k": "2"},
		},
		"float stays float": {
			obj:    apitest.MakeConfigMap("cm", "default").Obj(),
			ops:    []api.PlaintextOverrider{{Path: "/ratio", Operator: add, Value: rawJSON(t, 0.5)}},
			fields: []string{"ratio"}, want: 0.5,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, tc.obj, api.Overriders{Plaintext: tc.ops})
			if diff := cmp.Diff(tc.want, nested(t, got, tc.fields...)); diff != "" {
				t.Errorf("%v (-want +got):\n%s", tc.fields, diff)
			}
			// The result must stay valid unstructured content.
			_ = got.DeepCopy()
		})
	}
}

func TestPlaintextOverriderErrors(t *testing.T) {
	cases := map[string]struct {
		ops      []api.PlaintextOverrider
		field    string
		wantPath string
		wantErr  string
	}{
		"replace of a missing path names the failing operation": {
			ops: []api.PlaintextOverrider{
				{Path: "/metadata/labels", Operator: api.OverriderOpAdd, Value: rawJSON(t, map[string]string{})},
				{Path: "/spec/nope/x", Operator: api.OverriderOpReplace, Value: rawJSON(t, 1)},
			},
			field: "spec.overrideRules[0].overriders.plaintext[1]", wantPath: "/spec/nope/x", wantErr: "replace operation does not apply",
		},
		"remove of a missing path": {
			ops:   []api.PlaintextOverrider{{Path: "/status", Operator: api.OverriderOpRemove}},
			field: "spec.overrideRules[0].overriders.plaintext[0]", wantPath: "/status", wantErr: "unable to remove nonexistent key",
		},
		"unknown operator": {
			ops:   []api.PlaintextOverrider{{Path: "/a", Operator: "move"}},
			field: "spec.overrideRules[0].overriders.plaintext[0]", wantPath: "/a", wantErr: `unknown operator "move"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := applyRule(t, apitest.MakeDeployment("web", "default").Obj(), api.Overriders{Plaintext: tc.ops})
			assertOverrideError(t, err, tc.field, tc.wantPath, tc.wantErr)
		})
	}
}

// TestOverriderOrderWithinRule pins Karmada's order inside one rule: image,
// command, args, labels, annotations, field, plaintext. Each later overrider
// reads or overwrites what an earlier one wrote, so another order gives a
// different result or an error.
func TestOverriderOrderWithinRule(t *testing.T) {
	obj := apitest.MakeDeployment("web", "default").Image("nginx:1.27").Container("sidecar", "envoy:v1").Obj()
	got := mustApplyRule(t, obj, api.Overriders{
		Plaintext: []api.PlaintextOverrider{
			// After image: had the image overrider run later, it would have
			// prefixed this value with its registry.
			{Path: "/spec/template/spec/containers/0/image", Operator: api.OverriderOpReplace, Value: rawJSON(t, "custom:1")},
			// After annotations and labels: replace needs the keys to exist.
			{Path: "/metadata/annotations/image", Operator: api.OverriderOpReplace, Value: rawJSON(t, "plaintext")},
			{Path: "/metadata/labels/final", Operator: api.OverriderOpReplace, Value: rawJSON(t, "plaintext")},
			// After field: had the field overrider run later, it would have
			// patched this document to {"by":"field"}.
			{Path: "/metadata/annotations/doc", Operator: api.OverriderOpReplace, Value: rawJSON(t, `{"by":"plaintext"}`)},
			// After args: args exist only once the args overrider ran.
			{Path: "/spec/template/spec/containers/0/args/0", Operator: api.OverriderOpReplace, Value: rawJSON(t, "--plaintext")},
		},
		// After annotations: the document exists only once they ran, else
		// the field overrider fails.
		FieldOverrider: []api.FieldOverrider{{FieldPath: "/metadata/annotations/doc", JSON: []api.JSONPatchOperation{
			{SubPath: "/by", Operator: api.OverriderOpReplace, Value: rawJSON(t, "field")},
		}}},
		AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"doc": `{"by":"annotations"}`, "image": "annotations"}}},
		LabelsOverrider:      []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"final": "labels"}}},
		ArgsOverrider:        []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpAdd, Value: []string{"--args"}}},
		CommandOverrider:     []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpAdd, Value: []string{"run"}}},
		ImageOverrider:       []api.ImageOverrider{{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "reg.eu"}},
	})
	want := map[string]any{
		"app image":     "custom:1",
		"sidecar image": "reg.eu/envoy:v1",
		"command":       []any{"run"},
		"args":          []any{"--plaintext"},
		"label":         "plaintext",
		"doc":           `{"by":"plaintext"}`,
		"annotation":    "plaintext",
	}
	gotView := map[string]any{
		"app image":     containerField(t, got, templateSpec, "containers", 0, "image"),
		"sidecar image": containerField(t, got, templateSpec, "containers", 1, "image"),
		"command":       containerField(t, got, templateSpec, "containers", 0, "command"),
		"args":          containerField(t, got, templateSpec, "containers", 0, "args"),
		"label":         nested(t, got, "metadata", "labels", "final"),
		"doc":           nested(t, got, "metadata", "annotations", "doc"),
		"annotation":    nested(t, got, "metadata", "annotations", "image"),
	}
	if diff := cmp.Diff(want, gotView); diff != "" {
		t.Errorf("rule result (-want +got):\n%s", diff)
	}
}

func TestApplyPolicies(t *testing.T) {
	label := func(v string) api.Overriders {
		return api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"who": v}}}}
	}
	east := apitest.MakeAffinity().Names("east").Obj()
	west := apitest.MakeAffinity().Names("west").Obj()
	// Named so that name order alone would put the namespaced policy first.
	global := apitest.MakeClusterOverridePolicy("z-global").
		Rule(nil, label("global-all")).
		Rule(west, label("global-west")).ClusterObj()
	local := apitest.MakeOverridePolicy("a-local", "default").SelectKind("v1", "ConfigMap").
		Rule(east, label("local-east")).Obj()
	old := apitest.MakeOverridePolicy("old", "default").SelectName("v1", "ConfigMap", "cm").
		Deprecated(west, label("old-west")).Obj()
	cases := map[string]struct {
		cluster    string
		namespaced []api.OverridePolicy
		wantLabel  string
		wantRules  []string
	}{
		"namespaced after cluster-wide on east": {
			cluster: "east", namespaced: []api.OverridePolicy{*local},
			wantLabel: "local-east",
			wantRules: []string{"ClusterOverridePolicy z-global spec.overrideRules[0]", "OverridePolicy default/a-local spec.overrideRules[0]"},
		},
		"rules in order on west": {
			cluster: "west", namespaced: []api.OverridePolicy{*local},
			wantLabel: "global-west",
			wantRules: []string{"ClusterOverridePolicy z-global spec.overrideRules[0]", "ClusterOverridePolicy z-global spec.overrideRules[1]"},
		},
		"more specific policy last": {
			cluster: "west", namespaced: []api.OverridePolicy{*old, *local},
			wantLabel: "old-west",
			wantRules: []string{"ClusterOverridePolicy z-global spec.overrideRules[0]", "ClusterOverridePolicy z-global spec.overrideRules[1]", "OverridePolicy default/old spec.overrideRules[0]"},
		},
		"deprecated form skips other clusters": {
			cluster: "north", namespaced: []api.OverridePolicy{*old},
			wantLabel: "global-all",
			wantRules: []string{"ClusterOverridePolicy z-global spec.overrideRules[0]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := apitest.MakeConfigMap("cm", "default").Obj()
			overrides := policy.MatchOverrides(obj, tc.namespaced, []api.ClusterOverridePolicy{*global})
			applied, err := Apply(obj, apitest.MakeCluster(tc.cluster).Obj(), overrides)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := unstructured.NestedString(obj.Object, "metadata", "labels", "who")
			if got != tc.wantLabel {
				t.Errorf("label who = %q, want %q", got, tc.wantLabel)
			}
			var rules []string
			for _, r := range applied.Rules {
				rules = append(rules, r.Policy()+" "+r.Field())
			}
			if diff := cmp.Diff(tc.wantRules, rules); diff != "" {
				t.Errorf("applied rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyLeavesObjectOnError(t *testing.T) {
	obj := apitest.MakeDeployment("web", "default").Image("nginx:1.27").Obj()
	before := obj.DeepCopy()
	p := apitest.MakeOverridePolicy("p", "default").
		Image(nil, api.Tag, api.OverriderOpReplace, "1.28").
		Plaintext(nil, "/nope/x", api.OverriderOpRemove, "").Obj()
	_, err := Apply(obj, apitest.MakeCluster("east").Obj(), policy.MatchOverrides(obj, []api.OverridePolicy{*p}, nil))
	assertOverrideError(t, err, "spec.overrideRules[1].overriders.plaintext[0]", "/nope/x", "remove operation does not apply")
	if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
		t.Errorf("failed apply changed the object (-before +after):\n%s", diff)
	}
}
