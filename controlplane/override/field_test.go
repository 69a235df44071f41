package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestFieldOverrider(t *testing.T) {
	add, rm, rep := api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace
	const yamlDoc = "server:\n  port: 8080\n  hosts:\n  - a\n  - b\nlog: debug\n"
	const jsonDoc = `{"db":{"host":"localhost","port":5432},"features":["x"]}`
	cm := func() *apitest.TemplateWrapper {
		return apitest.MakeConfigMap("cfg", "default").Data("config.yaml", yamlDoc).Data("config.json", jsonDoc)
	}
	cases := map[string]struct {
		obj  *unstructured.Unstructured
		o    api.FieldOverrider
		key  string
		want string
	}{
		"yaml replace add remove stays yaml": {
			obj: cm().Obj(),
			o: api.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []api.YAMLPatchOperation{
				{SubPath: "/server/port", Operator: rep, Value: rawJSON(t, 9090)},
				{SubPath: "/server/hosts/-", Operator: add, Value: rawJSON(t, "c")},
				{SubPath: "/log", Operator: rm},
			}},
			key:  "config.yaml",
			want: "server:\n  hosts:\n  - a\n  - b\n  - c\n  port: 9090\n",
		},
		"yaml add object value": {
			obj: cm().Obj(),
			o: api.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []api.YAMLPatchOperation{
				{SubPath: "/tls", Operator: add, Value: rawJSON(t, map[string]any{"enabled": true})},
			}},
			key:  "config.yaml",
			want: "log: debug\nserver:\n  hosts:\n  - a\n  - b\n  port: 8080\ntls:\n  enabled: true\n",
		},
		"json replace and add stays json": {
			obj: cm().Obj(),
			o: api.FieldOverrider{FieldPath: "/data/config.json", JSON: []api.JSONPatchOperation{
				{SubPath: "/db/host", Operator: rep, Value: rawJSON(t, "db.eu.internal")},
				{SubPath: "/features/0", Operator: add, Value: rawJSON(t, "w")},
			}},
			key:  "config.json",
			want: `{"db":{"host":"db.eu.internal","port":5432},"features":["w","x"]}`,
		},
		"json remove": {
			obj:  cm().Obj(),
			o:    api.FieldOverrider{FieldPath: "/data/config.json", JSON: []api.JSONPatchOperation{{SubPath: "/features", Operator: rm}}},
			key:  "config.json",
			want: `{"db":{"host":"localhost","port":5432}}`,
		},
		"no operations is a no-op": {
			obj:  cm().Obj(),
			o:    api.FieldOverrider{FieldPath: "/data/config.json"},
			key:  "config.json",
			want: jsonDoc,
		},
		"escaped field path": {
			obj:  apitest.MakeConfigMap("cfg", "default").Data("a/b.json", `{"k":1}`).Obj(),
			o:    api.FieldOverrider{FieldPath: "/data/a~1b.json", JSON: []api.JSONPatchOperation{{SubPath: "/k", Operator: rep, Value: rawJSON(t, 2)}}},
			key:  "a/b.json",
			want: `{"k":2}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, tc.obj, api.Overriders{FieldOverrider: []api.FieldOverrider{tc.o}})
			if diff := cmp.Diff(tc.want, nested(t, got, "data", tc.key)); diff != "" {
				t.Errorf("data[%s] (-want +got):\n%s", tc.key, diff)
			}
		})
	}
}

func TestFieldOverriderErrors(t *testing.T) {
	obj := apitest.MakeConfigMap("cfg", "default").Data("c.yaml", "a: 1\n").Data("c.json", `{"a":1}`).Data("text", "not: [yaml").Set(int64(3), "spec", "n").Obj()
	cases := map[string]struct {
		o        api.FieldOverrider
		wantPath string
		wantErr  string
	}{
		"missing field": {
			o:        api.FieldOverrider{FieldPath: "/data/none.yaml", YAML: []api.YAMLPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}}},
			wantPath: "/data/none.yaml", wantErr: `no field "data/none.yaml"`,
		},
		"field is not a string": {
			o:        api.FieldOverrider{FieldPath: "/spec/n", JSON: []api.JSONPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}}},
			wantPath: "/spec/n", wantErr: "holds a number, not a string",
		},
		"both json and yaml": {
			o: api.FieldOverrider{FieldPath: "/data/c.yaml",
				JSON: []api.JSONPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}},
				YAML: []api.YAMLPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}}},
			wantPath: "/data/c.yaml", wantErr: "not both",
		},
		"invalid yaml": {
			o:        api.FieldOverrider{FieldPath: "/data/text", YAML: []api.YAMLPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}}},
			wantPath: "/data/text", wantErr: "decode yaml",
		},
		"json text is not json": {
			o:        api.FieldOverrider{FieldPath: "/data/c.yaml", JSON: []api.JSONPatchOperation{{SubPath: "/a", Operator: api.OverriderOpRemove}}},
			wantPath: "/data/c.yaml", wantErr: "invalid",
		},
		"sub path missing": {
			o:        api.FieldOverrider{FieldPath: "/data/c.json", JSON: []api.JSONPatchOperation{{SubPath: "/b/c", Operator: api.OverriderOpReplace, Value: rawJSON(t, 1)}}},
			wantPath: "/data/c.json", wantErr: "/b/c",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := applyRule(t, obj, api.Overriders{FieldOverrider: []api.FieldOverrider{tc.o}})
			assertOverrideError(t, err, "spec.overrideRules[0].overriders.fieldOverrider[0]", tc.wantPath, tc.wantErr)
		})
	}
}
