package api_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// summary flattens a Bundle into comparable strings.
func summary(b *api.Bundle) []string {
	var out []string
	for _, c := range b.Clusters {
		out = append(out, "Cluster "+c.Name)
	}
	for _, p := range b.PropagationPolicies {
		out = append(out, "PropagationPolicy "+p.Namespace+"/"+p.Name)
	}
	for _, p := range b.ClusterPropagationPolicies {
		out = append(out, "ClusterPropagationPolicy "+p.Name)
	}
	for _, p := range b.OverridePolicies {
		out = append(out, "OverridePolicy "+p.Namespace+"/"+p.Name)
	}
	for _, p := range b.ClusterOverridePolicies {
		out = append(out, "ClusterOverridePolicy "+p.Name)
	}
	for _, rb := range b.Bindings {
		out = append(out, "ResourceBinding "+rb.Namespace+"/"+rb.Name)
	}
	for _, t := range b.Templates {
		out = append(out, t.GetKind()+" "+t.GetNamespace()+"/"+t.GetName())
	}
	return out
}

func decodeFile(t *testing.T, path string) *api.Bundle {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Decode(path, data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return b
}

func TestDecodeSample(t *testing.T) {
	b := decodeFile(t, "testdata/fleet.yaml")
	want := []string{
		"Cluster east",
		"Cluster west",
		"PropagationPolicy default/web",
		"ClusterPropagationPolicy everything",
		"OverridePolicy default/eu-registry",
		"ClusterOverridePolicy team-label",
		"ResourceBinding default/web-deployment",
		"Deployment default/web",
		"ConfigMap default/web-config",
		"Namespace /shop",
	}
	if diff := cmp.Diff(want, summary(b)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	// Defaults ran: the namespaced policy got the default namespace, its
	// selector inherited it, and Divided got Weighted.
	pp := b.PropagationPolicies[0]
	if diff := cmp.Diff("default", pp.Spec.ResourceSelectors[0].Namespace); diff != "" {
		t.Errorf("selector namespace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(api.ReplicaDivisionPreferenceWeighted, pp.Spec.Placement.ReplicaScheduling.ReplicaDivisionPreference); diff != "" {
		t.Errorf("division preference (-want +got):\n%s", diff)
	}
	// The deprecated override form was folded into overrideRules.
	op := b.OverridePolicies[0].Spec
	if len(op.OverrideRules) != 1 || op.TargetCluster != nil || !op.Overriders.IsEmpty() {
		t.Errorf("deprecated override not folded: %+v", op)
	}
	if diff := cmp.Diff("testdata/fleet.yaml:10.items[1]", b.Origins["v1 Namespace shop"]); diff != "" {
		t.Errorf("origin (-want +got):\n%s", diff)
	}
	if got := b.Templates[0].Object["spec"].(map[string]any)["replicas"]; got != int64(3) {
		t.Errorf("template replicas = %#v, want int64(3)", got)
	}
}

func TestDecodeIsDeterministic(t *testing.T) {
	first, err := json.Marshal(decodeFile(t, "testdata/fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := json.Marshal(decodeFile(t, "testdata/fleet.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(first), string(again)); diff != "" {
			t.Fatalf("decode output changed (-first +again):\n%s", diff)
		}
	}
}

const ppHeader = "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: prod}\n"

func TestDecodeErrors(t *testing.T) {
	cases := map[string]struct {
		yaml string
		want string
	}{
		"unknown field names its path": {
			yaml: ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n  placement:\n    foo: 1\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.placement.foo: Forbidden: unknown field`,
		},
		"unknown field inside a list names the index": {
			yaml: ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod, bogus: x}]\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.resourceSelectors[0].bogus: Forbidden: unknown field`,
		},
		"workloadAffinity is refused by name, not as an unknown field": {
			yaml: ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n  placement:\n    workloadAffinity:\n      affinity: {groupByLabelKey: app.group}\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.placement.workloadAffinity: Forbidden: ` + api.WorkloadAffinityRefusal,
		},
		"association: true is refused by name with the way out": {
			yaml: ppHeader + "spec:\n  association: true\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.association: Forbidden: ` + api.AssociationRefusal,
		},
		"wrong type": {
			yaml: ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n  priority: high\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.priority: Invalid value: "high": must be of type int32`,
		},
		"bad enum": {
			yaml: ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n  placement:\n    replicaScheduling: {replicaSchedulingType: Split}\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value: "Split": supported values: "Duplicated", "Divided"`,
		},
		"second document is counted, first empty one too": {
			yaml: "# nothing\n---\n" + ppHeader + "spec: {}\n",
			want: `p.yaml:2: PropagationPolicy prod/web: spec.resourceSelectors: Required value: at least one resource selector is required`,
		},
		"namespace defaults before naming the object": {
			yaml: "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: op}\nspec:\n  overrideRules:\n  - overriders:\n      plaintext: [{path: spec/replicas, operator: remove}]\n",
			want: `p.yaml:1: OverridePolicy default/op: spec.overrideRules[0].overriders.plaintext[0].path: Invalid value: "spec/replicas": path should be start with / character`,
		},
		"a leading separator does not start a document": {
			yaml: "---\n" + ppHeader + "spec: {}\n",
			want: `p.yaml:1: PropagationPolicy prod/web: spec.resourceSelectors: Required value: at least one resource selector is required`,
		},
		"empty documents between separators count; separator comments are allowed": {
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # two\n---\n" + ppHeader + "spec: {}\n",
			want: `p.yaml:3: PropagationPolicy prod/web: spec.resourceSelectors: Required value: at least one resource selector is required`,
		},
		"list items are located by index": {
			yaml: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMap}\n",
			want: `p.yaml:1.items[1]: ConfigMap: metadata.name: Required value`,
		},
		"template without name": {
			yaml: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {namespace: default}\n",
			want: `p.yaml:1: Deployment: metadata.name: Required value`,
		},
		"template without apiVersion and kind": {
			yaml: "metadata: {name: x}\n",
			want: `p.yaml:1: x: apiVersion: Required value; kind: Required value`,
		},
		"unsupported Karmada kind": {
			yaml: "apiVersion: work.karmada.io/v1alpha1\nkind: Work\nmetadata: {name: w, namespace: karmada-es-east}\n",
			want: `p.yaml:1: Work karmada-es-east/w: kind: Unsupported value: "Work": supported values: "ResourceBinding"`,
		},
		"wrong Karmada version": {
			yaml: "apiVersion: policy.karmada.io/v1beta1\nkind: ClusterPropagationPolicy\nmetadata: {name: c}\n",
			want: `p.yaml:1: ClusterPropagationPolicy c: apiVersion: Unsupported value: "policy.karmada.io/v1beta1": supported values: "policy.karmada.io/v1alpha1"`,
		},
		"duplicate object": {
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: d}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: d}\n",
			want: `p.yaml:2: ConfigMap d/a: already defined at p.yaml:1`,
		},
		"duplicate key": {
			yaml: "apiVersion: v1\nkind: ConfigMap\nkind: Secret\nmetadata: {name: a}\n",
			want: `p.yaml:1: parse yaml: yaml: unmarshal errors:` + "\n" + `  line 3: key "kind" already set in map`,
		},
		"not an object": {
			yaml: "- a\n- b\n",
			want: `p.yaml:1: document is not an object`,
		},
		"bad cluster quantity names its path": {
			yaml: "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: east}\nspec:\n  resourceModels: [{grade: 0, ranges: [{name: cpu, min: lots, max: \"1\"}]}]\n",
			want: `p.yaml:1: Cluster east: spec.resourceModels[0].ranges[0].min: Invalid value: "lots": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		"errors in several documents are all reported": {
			yaml: "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: Bad_Name}\n",
			want: "p.yaml:1: ConfigMap: metadata.name: Required value\n" +
				`p.yaml:2: Cluster Bad_Name: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := api.Decode("p.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("Decode succeeded with %v", summary(b))
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if b != nil {
				t.Errorf("bundle = %v, want nil on error", summary(b))
			}
			var de *api.DocumentError
			if !errors.As(err, &de) {
				t.Errorf("error %T is not a *api.DocumentError", err)
			}
		})
	}
}

func TestDecodeDocumentErrorFields(t *testing.T) {
	yaml := ppHeader + "spec:\n  resourceSelectors: [{apiVersion: v1, kind: Pod}]\n" +
		"  placement:\n    replicaScheduling:\n      weightPreference:\n        staticWeightList:\n" +
		"        - {targetCluster: {clusterNames: [a]}, weight: 1}\n        - {targetCluster: {clusterNames: [b]}, weight: 0}\n"
	_, err := api.Decode("p.yaml", []byte(yaml))
	var de *api.DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *api.DocumentError", err)
	}
	want := []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight"}
	var got []string
	for _, fe := range de.Fields {
		got = append(got, fe.Field)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field paths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(field.ErrorTypeInvalid, de.Fields[0].Type); diff != "" {
		t.Errorf("type (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("PropagationPolicy prod/web", de.Object); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
}

func TestDecodeSkipsEmptyDocuments(t *testing.T) {
	b, err := api.Decode("e.yaml", []byte("---\n# only a comment\n---\n\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), summary(b)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestMerge(t *testing.T) {
	a, err := api.Decode("a.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm1, namespace: d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Decode("b.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm2, namespace: d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b); err != nil {
		t.Fatalf("Merge: %v", err)
	}
	if diff := cmp.Diff([]string{"ConfigMap d/cm1", "ConfigMap d/cm2"}, summary(a)); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	err = a.Merge(b)
	if err == nil {
		t.Fatal("merging the same bundle twice succeeded")
	}
	if diff := cmp.Diff("b.yaml:1: v1 ConfigMap d/cm2 is already defined at b.yaml:1", err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if got := len(a.Templates); got != 2 {
		t.Errorf("failed merge changed the bundle: %d templates", got)
	}
}

func TestDefaultTemplateNamespaces(t *testing.T) {
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}",
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}",
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n" +
			"spec: {group: example.com, scope: Cluster, names: {kind: Widget}}",
		"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}",
		"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: other}",
	}
	b, err := api.Decode("t.yaml", []byte(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.DefaultTemplateNamespaces("shop"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Deployment shop/web",
		"Namespace /shop",
		"ClusterRole /reader",
		"CustomResourceDefinition /widgets.example.com",
		"Widget /w",
		"Gadget shop/g",
		"ConfigMap other/c",
	}
	if diff := cmp.Diff(want, summary(b)); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("t.yaml:1", b.Origins["apps/v1 Deployment shop/web"]); diff != "" {
		t.Errorf("origin re-keyed (-want +got):\n%s", diff)
	}
}

func TestDefaultTemplateNamespacesRefusesCollision(t *testing.T) {
	b, err := api.Decode("t.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"+
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = b.DefaultTemplateNamespaces("default")
	if diff := cmp.Diff(`t.yaml:1: v1 ConfigMap c in namespace "default" is already defined at t.yaml:2`, errString(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
	if got := b.Templates[0].GetNamespace(); got != "" {
		t.Errorf("failed defaulting changed namespace to %q", got)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
