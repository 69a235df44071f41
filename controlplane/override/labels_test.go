package override

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func TestLabelsAnnotationsOverrider(t *testing.T) {
	add, rm, rep := api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace
	cases := map[string]struct {
		obj             *unstructured.Unstructured
		o               api.Overriders
		wantLabels      map[string]any
		wantAnnotations map[string]any
	}{
		"add creates the map": {
			obj:        apitest.MakeConfigMap("cm", "default").Obj(),
			o:          api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"tier": "prod", "app.kubernetes.io/name": "web"}}}},
			wantLabels: map[string]any{"tier": "prod", "app.kubernetes.io/name": "web"},
		},
		"add overwrites an existing key": {
			obj:        apitest.MakeConfigMap("cm", "default").Label("tier", "dev").Label("keep", "me").Obj(),
			o:          api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"tier": "prod"}}}},
			wantLabels: map[string]any{"tier": "prod", "keep": "me"},
		},
		"replace changes existing keys only": {
			obj:        apitest.MakeConfigMap("cm", "default").Label("tier", "dev").Obj(),
			o:          api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: rep, Value: map[string]string{"tier": "prod", "absent": "x"}}}},
			wantLabels: map[string]any{"tier": "prod"},
		},
		"replace without a map is a no-op": {
			obj: apitest.MakeConfigMap("cm", "default").Obj(),
			o:   api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: rep, Value: map[string]string{"tier": "prod"}}}},
		},
		"remove deletes existing keys and skips absent ones": {
			obj:        apitest.MakeConfigMap("cm", "default").Label("a", "1").Label("b/c", "2").Label("d", "3").Obj(),
			o:          api.Overriders{LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: rm, Value: map[string]string{"a": "", "b/c": "ignored", "zz": ""}}}},
			wantLabels: map[string]any{"d": "3"},
		},
		"keys with tilde and slash": {
			obj:             apitest.MakeConfigMap("cm", "default").Obj(),
			o:               api.Overriders{AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"example.com/a~b": "v"}}}},
			wantAnnotations: map[string]any{"example.com/a~b": "v"},
		},
		"annotations add and replace": {
			obj: apitest.MakeDeployment("web", "default").Annotation("owner", "team-a").Obj(),
			o: api.Overriders{AnnotationsOverrider: []api.LabelAnnotationOverrider{
				{Operator: add, Value: map[string]string{"region": "eu"}},
				{Operator: rep, Value: map[string]string{"owner": "team-b"}},
			}},
			wantAnnotations: map[string]any{"owner": "team-b", "region": "eu"},
		},
		"labels before annotations, both in one rule": {
			obj: apitest.MakeConfigMap("cm", "default").Obj(),
			o: api.Overriders{
				AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"note": "x"}}},
				LabelsOverrider:      []api.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"l": "y"}}},
			},
			wantLabels:      map[string]any{"l": "y"},
			wantAnnotations: map[string]any{"note": "x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := mustApplyRule(t, tc.obj, tc.o)
			labels, _ := nested(t, got, "metadata", "labels").(map[string]any)
			if diff := cmp.Diff(tc.wantLabels, labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			annotations, _ := nested(t, got, "metadata", "annotations").(map[string]any)
			if diff := cmp.Diff(tc.wantAnnotations, annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabelsOverriderUnknownOperator(t *testing.T) {
	_, err := applyRule(t, apitest.MakeConfigMap("cm", "default").Obj(), api.Overriders{
		LabelsOverrider: []api.LabelAnnotationOverrider{{Operator: "merge", Value: map[string]string{"a": "b"}}},
	})
	assertOverrideError(t, err, "spec.overrideRules[0].overriders.labelsOverrider[0]", "", `unknown operator "merge"`)
}
