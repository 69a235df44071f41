package terraform

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

var allPolicyKinds = []policyKind{propagationPolicyKind, clusterPropagationPolicyKind, overridePolicyKind, clusterOverridePolicyKind}

func TestSnakeCase(t *testing.T) {
	cases := map[string]string{
		"resourceSelectors":           "resource_selectors",
		"apiVersion":                  "api_version",
		"exclude":                     "exclude",
		"json":                        "json",
		"jsonPath":                    "json_path",
		"clusterIP":                   "cluster_ip",
		"HTTPServer":                  "http_server",
		"preserveResourcesOnDeletion": "preserve_resources_on_deletion",
		"v1Beta":                      "v1_beta",
		"subPath":                     "sub_path",
	}
	for in, want := range cases {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// dumpSpecFields lists fields as "path kind required", depth first.
func dumpSpecFields(fields []*specField, prefix string) []string {
	kinds := map[fieldKind]string{
		fieldString: "string", fieldJSONText: "json", fieldBool: "bool", fieldInt: "int", fieldStringList: "[]string",
		fieldStringMap: "map", fieldObject: "object", fieldObjectList: "[]object",
	}
	var out []string
	for _, f := range fields {
		req := "optional"
		if f.required {
			req = "required"
		}
		out = append(out, fmt.Sprintf("%s%s %s %s", prefix, f.name, kinds[f.kind], req))
		out = append(out, dumpSpecFields(f.fields, prefix+f.name+".")...)
	}
	return out
}

type genInner struct {
	A string `json:"a"`
	B *int32 `json:"bValue,omitempty"`
}

type genEmbedded struct {
	E string `json:"e,omitempty"`
}

type genOuter struct {
	genEmbedded `json:",inline"`
	APIVersion  string               `json:"apiVersion"`
	Flag        *bool                `json:"flag,omitempty"`
	Count       int                  `json:"count,omitempty"`
	List        []string             `json:"list,omitempty"`
	Map         map[string]string    `json:"map,omitempty"`
	Inner       genInner             `json:"inner"`
	Inners      []*genInner          `json:"inners,omitempty"`
	Raw         apiextensionsv1.JSON `json:"raw,omitempty"`
	When        metav1.Time          `json:"when,omitempty"`
	Hidden      string               `json:"-"`
	unexported  string
}

type genCollision struct {
	A string `json:"fooBar"`
	B string `json:"foo_bar"`
}

type genRecursive struct {
	Next *genRecursive `json:"next,omitempty"`
}

func TestSpecFieldsGenerator(t *testing.T) {
	fields, err := specFields(reflect.TypeFor[genOuter]())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"e string optional", // inlined
		"api_version string required",
		"flag bool optional",
		"count int optional",
		"list []string optional",
		"map map optional",
		"inner object required",
		"inner.a string required",
		"inner.b_value int optional",
		"inners []object optional",
		"inners.a string required",
		"inners.b_value int optional",
		"raw json optional",
		// when (metav1.Time), hidden (json:"-") and unexported are skipped.
	}
	if diff := cmp.Diff(want, dumpSpecFields(fields, "")); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if got := findSpecField(fields, "inner").fields[1].constraint(); got.min == nil || *got.min != -1<<31 || *got.max != 1<<31-1 {
		t.Errorf("an *int32 must be bounded to int32, got %+v", got)
	}
	_ = genOuter{}.unexported

	bad := map[string]reflect.Type{
		"map of ints": reflect.TypeFor[struct {
			M map[string]int `json:"m"`
		}](),
		"list of ints": reflect.TypeFor[struct {
			L []int `json:"l"`
		}](),
		"no JSON name":    reflect.TypeFor[struct{ X string }](),
		"recursive":       reflect.TypeFor[genRecursive](),
		"snake collision": reflect.TypeFor[genCollision](),
		"unsupported kind": reflect.TypeFor[struct {
			F float64 `json:"f"`
		}](),
	}
	for name, typ := range bad {
		if _, err := specFields(typ); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// TestPolicyShapes pins the attributes that matter to users and checks the
// skipped fields are gone.
func TestPolicyShapes(t *testing.T) {
	cases := []struct {
		kind    policyKind
		present []string
		absent  []string
	}{
		{
			kind: propagationPolicyKind,
			present: []string{
				"resource_selectors []object required",
				"resource_selectors.api_version string required",
				"resource_selectors.label_selector.match_expressions.operator string required",
				"placement.cluster_affinity.exclude []string optional",
				"placement.cluster_affinities.affinity_name string required",
				"placement.cluster_affinities.cluster_names []string optional", // inlined ClusterAffinity
				"placement.cluster_affinities.overflow_affinities.field_selector.match_expressions.key string required",
				"placement.cluster_tolerations.toleration_seconds int optional",
				"placement.replica_scheduling.weight_preference.static_weight_list.target_cluster object required",
				"placement.replica_scheduling.weight_preference.static_weight_list.weight int required",
				"placement.spread_constraints.max_groups int optional",
				"priority int optional",
				"propagate_deps bool optional",
				"preserve_resources_on_deletion bool optional",
				"suspension.dispatching bool optional",
				"suspension.dispatching_on_clusters.cluster_names []string optional",
				"dependent_overrides []string optional",
			},
			absent: []string{"association", "scheduler_name", "failover",
				"activation_preference", "schedule_priority"},
		},
		{
			kind: overridePolicyKind,
			present: []string{
				"resource_selectors []object optional",
				"override_rules.overriders object required",
				"override_rules.overriders.plaintext.value json optional",
				"override_rules.overriders.labels_overrider.value map optional",
				"override_rules.overriders.command_overrider.value []string optional",
				"override_rules.overriders.field_overrider.json.sub_path string required",
				"override_rules.overriders.image_overrider.predicate.path string required",
			},
			absent: []string{"target_cluster", "overriders"},
		},
	}
	for _, tc := range cases {
		dump := dumpSpecFields(tc.kind.fields(), "")
		have := map[string]bool{}
		for _, d := range dump {
			have[d] = true
			have[strings.Fields(d)[0]] = true
		}
		for _, p := range tc.present {
			if !have[p] {
				t.Errorf("%s: want attribute %q", tc.kind.kind, p)
			}
		}
		for _, p := range tc.absent {
			if have[p] {
				t.Errorf("%s: attribute %q should be skipped", tc.kind.kind, p)
			}
		}
	}
}

// TestPolicySchemaDescriptions fails when any attribute lacks a description.
func TestPolicySchemaDescriptions(t *testing.T) {
	for _, k := range allPolicyKinds {
		s := k.schema()
		if s.MarkdownDescription == "" {
			t.Errorf("%s: resource has no description", k.typeName)
		}
		var walk func(prefix string, attrs map[string]schema.Attribute)
		walk = func(prefix string, attrs map[string]schema.Attribute) {
			for name, a := range attrs {
				p := prefix + name
				if strings.TrimSpace(a.GetMarkdownDescription()) == "" {
					t.Errorf("%s: attribute %s has no description", k.typeName, p)
				}
				switch n := a.(type) {
				case schema.SingleNestedAttribute:
					walk(p+".", n.Attributes)
				case schema.ListNestedAttribute:
					walk(p+".", n.NestedObject.Attributes)
				}
			}
		}
		walk("", s.Attributes)
		for _, reserved := range []string{"count", "for_each", "depends_on", "lifecycle", "provider", "provisioner", "connection"} {
			if _, ok := s.Attributes[reserved]; ok {
				t.Errorf("%s: %q is reserved by Terraform", k.typeName, reserved)
			}
		}
	}
}

// TestPolicyFieldTables fails when a description, a constraint or a skipped
// field names no field of the Karmada types (a rename upstream, a typo).
func TestPolicyFieldTables(t *testing.T) {
	used := map[string]bool{}
	var collect func([]*specField)
	collect = func(fields []*specField) {
		for _, f := range fields {
			used[f.key] = true
			collect(f.fields)
		}
	}
	collect(propagationFields())
	collect(overrideFields())
	collect(interpreterFields())
	collect(quotaFields())
	for _, key := range sortedKeys(fieldDescriptions) {
		if !used[key] {
			t.Errorf("fieldDescriptions[%q] matches no attribute", key)
		}
	}
	for _, key := range sortedKeys(fieldConstraints) {
		if !used[key] {
			t.Errorf("fieldConstraints[%q] matches no attribute", key)
		}
	}
	specs := map[string]reflect.Type{}
	for _, typ := range []reflect.Type{reflect.TypeFor[api.PropagationSpec](), reflect.TypeFor[api.OverrideSpec](), reflect.TypeFor[api.Placement](), reflect.TypeFor[api.CustomizationRules]()} {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			specs[typ.Name()+"."+name] = typ
		}
	}
	for _, key := range sortedKeys(skippedFields) {
		if specs[key] == nil {
			t.Errorf("skippedFields[%q] is not a field of PropagationSpec, OverrideSpec, Placement or CustomizationRules", key)
		}
		if skippedFields[key].reason == "" {
			t.Errorf("skippedFields[%q] has no reason", key)
		}
	}
	var kinds []string
	for _, k := range allPolicyKinds {
		kinds = append(kinds, k.kind)
		if !strings.Contains(k.schema().MarkdownDescription, "`spec.") {
			t.Errorf("%s: the description does not list the skipped fields", k.typeName)
		}
	}
	sort.Strings(kinds)
	if diff := cmp.Diff([]string{"ClusterOverridePolicy", "ClusterPropagationPolicy", "OverridePolicy", "PropagationPolicy"}, kinds); diff != "" {
		t.Error(diff)
	}
}

// TestPolicyObjectType checks the Terraform type the converters build equals
// the one the framework derives from the schema.
func TestPolicyObjectType(t *testing.T) {
	ctx := context.Background()
	for _, k := range allPolicyKinds {
		got := k.schema().Type().TerraformType(ctx)
		if !got.Equal(k.objectType()) {
			t.Errorf("%s: schema type %s\ndiffers from objectType %s", k.typeName, got, k.objectType())
		}
	}
}
