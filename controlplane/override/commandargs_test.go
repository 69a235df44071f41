package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestCommandArgsOverrider(t *testing.T) {
	add, rm := api.OverriderOpAdd, api.OverriderOpRemove
	cases := map[string]struct {
		obj     *unstructured.Unstructured
		podSpec []string
		o       api.Overriders
		list    string
		index   int
		field   string
		want    any
	}{
		"command add appends": {
			obj: apitest.MakeDeployment("web", "default").Command("app", "nginx", "-g").Obj(), podSpec: templateSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"daemon off;"}}}},
			list: "containers", field: "command", want: []any{"nginx", "-g", "daemon off;"},
		},
		"command add to missing list creates it": {
			obj: apitest.MakeDeployment("web", "default").Obj(), podSpec: templateSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"/bin/app"}}}},
			list: "containers", field: "command", want: []any{"/bin/app"},
		},
		"command remove deletes every occurrence": {
			obj: apitest.MakeDeployment("web", "default").Command("app", "a", "b", "a", "c").Obj(), podSpec: templateSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: rm, Value: []string{"a", "c"}}}},
			list: "containers", field: "command", want: []any{"b"},
		},
		"command remove from missing list leaves it out": {
			obj: apitest.MakeDeployment("web", "default").Obj(), podSpec: templateSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: rm, Value: []string{"a"}}}},
			list: "containers", field: "command", want: nil,
		},
		"args add on named container only": {
			obj: apitest.MakeDeployment("web", "default").Args("app", "--port=80").Args("sidecar", "--x").Obj(), podSpec: templateSpec,
			o:    api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "sidecar", Operator: add, Value: []string{"--y"}}}},
			list: "containers", index: 1, field: "args", want: []any{"--x", "--y"},
		},
		"args of other container untouched": {
			obj: apitest.MakeDeployment("web", "default").Args("app", "--port=80").Args("sidecar", "--x").Obj(), podSpec: templateSpec,
			o:    api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "sidecar", Operator: add, Value: []string{"--y"}}}},
			list: "containers", index: 0, field: "args", want: []any{"--port=80"},
		},
		"args remove": {
			obj: apitest.MakeStatefulSet("db", "default").Args("app", "--a", "--b").Obj(), podSpec: templateSpec,
			o:    api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: rm, Value: []string{"--a"}}}},
			list: "containers", field: "args", want: []any{"--b"},
		},
		"init container by name": {
			obj: apitest.MakeDeployment("web", "default").InitContainer("migrate", "migrate:v1").Obj(), podSpec: templateSpec,
			o:    api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "migrate", Operator: add, Value: []string{"up"}}}},
			list: "initContainers", field: "args", want: []any{"up"},
		},
		"pod": {
			obj: apitest.MakePod("p", "default").Command("app", "sleep").Obj(), podSpec: podSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"10"}}}},
			list: "containers", field: "command", want: []any{"sleep", "10"},
		},
		"cronjob": {
			obj: apitest.MakeCronJob("cj", "default").Command("app", "backup").Obj(), podSpec: cronSpec,
			o:    api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"--full"}}}},
			list: "containers", field: "command", want: []any{"backup", "--full"},
		},
		"job and daemonset share the template path": {
			obj: apitest.MakeJob("j", "default").Args("app", "x").Obj(), podSpec: templateSpec,
			o:    api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: rm, Value: []string{"x"}}}},
			list: "containers", field: "args", want: []any{},
		},
		"command then args in one rule": {
			obj: apitest.MakeDeployment("web", "default").Obj(), podSpec: templateSpec,
			o: api.Overriders{
				CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"run"}}},
				ArgsOverrider:    []api.CommandArgsOverrider{{ContainerName: "app", Operator: add, Value: []string{"--v=2"}}},
			},
			list: "containers", field: "args", want: []any{"--v=2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, tc.obj, tc.o)
			if diff := cmp.Diff(tc.want, containerField(t, got, tc.podSpec, tc.list, tc.index, tc.field)); diff != "" {
				t.Errorf("%s[%d].%s (-want +got):\n%s", tc.list, tc.index, tc.field, diff)
			}
		})
	}
}

func TestCommandArgsOverriderNoMatch(t *testing.T) {
	cases := map[string]*unstructured.Unstructured{
		"unknown container": apitest.MakeDeployment("web", "default").Command("app", "x").Obj(),
		"unknown kind":      apitest.MakeTemplate("example.io/v1", "Widget", "w", "default").Obj(),
		"configmap":         apitest.MakeConfigMap("cm", "default").Data("k", "v").Obj(),
	}
	for name, obj := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, obj, api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "ghost", Operator: api.OverriderOpAdd, Value: []string{"y"}}}})
			if diff := cmp.Diff(obj.Object, got.Object); diff != "" {
				t.Errorf("object changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCommandArgsOverriderErrors(t *testing.T) {
	cases := map[string]struct {
		obj      *unstructured.Unstructured
		o        api.Overriders
		field    string
		wantPath string
		wantErr  string
	}{
		"replace is not an operator here": {
			obj:     apitest.MakeDeployment("web", "default").Obj(),
			o:       api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpReplace, Value: []string{"x"}}}},
			field:   "spec.overrideRules[0].overriders.commandOverrider[0]",
			wantErr: `unknown operator "replace" (want add or remove)`,
		},
		"args not a list": {
			obj:      apitest.MakePod("p", "default").Set([]any{map[string]any{"name": "app", "image": "nginx", "args": "--x"}}, "spec", "containers").Obj(),
			o:        api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpAdd, Value: []string{"x"}}}},
			field:    "spec.overrideRules[0].overriders.argsOverrider[0]",
			wantPath: "/spec/containers/0/args",
			wantErr:  "holds a string, not a list of strings",
		},
		"command item not a string": {
			obj:      apitest.MakePod("p", "default").Set([]any{map[string]any{"name": "app", "image": "nginx", "command": []any{"sh", int64(1)}}}, "spec", "containers").Obj(),
			o:        api.Overriders{CommandOverrider: []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpRemove, Value: []string{"sh"}}}},
			field:    "spec.overrideRules[0].overriders.commandOverrider[0]",
			wantPath: "/spec/containers/0/command",
			wantErr:  "item 1 holds a number, not a string",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := applyRule(t, tc.obj, tc.o)
			assertOverrideError(t, err, tc.field, tc.wantPath, tc.wantErr)
		})
	}
}
