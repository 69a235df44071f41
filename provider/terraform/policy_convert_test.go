package terraform

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// policySpecValue is the resource value for a Karmada spec, built the way import
// builds it: the spec marshalled to JSON, then converted attribute by attribute.
func policySpecValue(t testing.TB, k policyKind, namespace, name string, spec any) tftypes.Value {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	v, _, err := k.stateValue(namespace, name, doc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func richPropagationSpec() api.PropagationSpec {
	return api.PropagationSpec{
		ResourceSelectors: []api.ResourceSelector{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "web-config", LabelSelector: &metav1.LabelSelector{
				MatchLabels:      map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"dev"}}},
			}},
		},
		PropagateDeps: true,
		Priority:      new(int32(-3)),
		Preemption:    api.PreemptAlways,
		Placement: api.Placement{
			ClusterAffinities: []api.ClusterAffinityTerm{{
				AffinityName: "primary",
				ClusterAffinity: api.ClusterAffinity{
					FieldSelector:   &api.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}},
					ExcludeClusters: []string{"old"},
				},
				OverflowAffinities: []api.OverflowClusterAffinity{{AffinityName: "burst", ClusterAffinity: api.ClusterAffinity{ClusterNames: []string{"spare"}}}},
			}},
			ClusterTolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(30))}},
			SpreadConstraints:  []api.SpreadConstraint{{SpreadByField: api.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 3}, {SpreadByField: api.SpreadByFieldZone, MinGroups: 2}},
			ReplicaScheduling: &api.ReplicaSchedulingStrategy{
				ReplicaSchedulingType:     api.ReplicaSchedulingTypeDivided,
				ReplicaDivisionPreference: api.ReplicaDivisionPreferenceWeighted,
				WeightPreference:          &api.ClusterPreferences{DynamicWeight: api.DynamicWeightByAvailableReplicas},
			},
		},
		ConflictResolution:          api.ConflictOverwrite,
		PreserveResourcesOnDeletion: new(true),
	}
}

func richOverrideSpec() api.OverrideSpec {
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }
	return api.OverrideSpec{
		ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		OverrideRules: []api.RuleWithCluster{
			{
				TargetCluster: &api.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
				Overriders: api.Overriders{
					Plaintext:            []api.PlaintextOverrider{{Path: "/spec/replicas", Operator: api.OverriderOpReplace, Value: raw(`3`)}, {Path: "/spec/paused", Operator: api.OverriderOpRemove}},
					ImageOverrider:       []api.ImageOverrider{{Predicate: &api.ImagePredicate{Path: "/spec/template/spec/containers/0/image"}, Component: api.Tag, Operator: api.OverriderOpReplace, Value: "1.28"}},
					CommandOverrider:     []api.CommandArgsOverrider{{ContainerName: "web", Operator: api.OverriderOpAdd, Value: []string{"--a", "--b"}}},
					ArgsOverrider:        []api.CommandArgsOverrider{{ContainerName: "web", Operator: api.OverriderOpRemove, Value: []string{"--c"}}},
					LabelsOverrider:      []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"a": "b"}}},
					AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpReplace, Value: map[string]string{"c": "d"}}},
					FieldOverrider: []api.FieldOverrider{
						{FieldPath: "/data/a.json", JSON: []api.JSONPatchOperation{{SubPath: "/x", Operator: api.OverriderOpAdd, Value: raw(`{"k":["v",1,true,null]}`)}}},
						{FieldPath: "/data/b.yaml", YAML: []api.YAMLPatchOperation{{SubPath: "/y", Operator: api.OverriderOpReplace, Value: raw(`"text"`)}}},
					},
				},
			},
			{Overriders: api.Overriders{ImageOverrider: []api.ImageOverrider{{Component: api.Registry, Operator: api.OverriderOpRemove}}}},
		},
	}
}

// TestPolicyRoundTrip converts api specs to Terraform values and back through
// the resource's own decoding, and expects Karmada's defaulted spec.
func TestPolicyRoundTrip(t *testing.T) {
	prop := richPropagationSpec()
	over := richOverrideSpec()
	cases := map[string]struct {
		kind     policyKind
		ns, name string
		spec     any
		want     func() any
	}{
		"propagation": {propagationPolicyKind, "apps", "web", prop, func() any {
			o := &api.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}, Spec: richPropagationSpec()}
			api.DefaultPropagationPolicy(o)
			return &o.Spec
		}},
		"cluster propagation": {clusterPropagationPolicyKind, "", "web", prop, func() any {
			o := &api.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: richPropagationSpec()}
			api.DefaultClusterPropagationPolicy(o)
			return &o.Spec
		}},
		"override": {overridePolicyKind, "apps", "eu", over, func() any {
			o := &api.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "eu", Namespace: "apps"}, Spec: richOverrideSpec()}
			api.DefaultOverridePolicy(o)
			return &o.Spec
		}},
		"cluster override": {clusterOverridePolicyKind, "", "eu", over, func() any {
			o := &api.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: richOverrideSpec()}
			api.DefaultClusterOverridePolicy(o)
			return &o.Spec
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p, diags := tc.kind.decode(policySpecValue(t, tc.kind, tc.ns, tc.name, tc.spec), path.Empty(), false)
			if diags.HasError() {
				t.Fatalf("decode: %v", diags)
			}
			if p.Kind != tc.kind.kind || p.Namespace != tc.ns || p.Name != tc.name {
				t.Errorf("got %s %s/%s", p.Kind, p.Namespace, p.Name)
			}
			var got any = p.Override
			if tc.kind.propagation {
				got = p.Propagation
			}
			if diff := cmp.Diff(tc.want(), got); diff != "" {
				t.Errorf("spec after the round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPolicyRoundTripKarmadaYAML round-trips every policy of Karmada YAML in
// the repository: api.Decode's result, through Terraform values, is unchanged.
func TestPolicyRoundTripKarmadaYAML(t *testing.T) {
	files := []string{
		"../../controlplane/api/testdata/fleet.yaml",
		"../../examples/preview/nginx.yaml",
	}
	for _, k := range allPolicyKinds {
		files = append(files, filepath.Join("../../examples/resources/flotilla_"+k.typeName, "policies.yaml"))
	}
	seen := map[string]int{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := api.Decode(file, data)
		if err != nil {
			t.Fatal(err)
		}
		check := func(k policyKind, meta metav1.ObjectMeta, spec any) {
			t.Helper()
			seen[k.kind]++
			p, diags := k.decode(policySpecValue(t, k, meta.Namespace, meta.Name, spec), path.Empty(), false)
			if diags.HasError() {
				t.Fatalf("%s %s %s: %v", file, k.kind, meta.Name, diags)
			}
			var got any = p.Override
			if k.propagation {
				got = p.Propagation
			}
			if diff := cmp.Diff(spec, got); diff != "" {
				t.Errorf("%s %s %s (-want +got):\n%s", file, k.kind, meta.Name, diff)
			}
		}
		for i := range b.PropagationPolicies {
			check(propagationPolicyKind, b.PropagationPolicies[i].ObjectMeta, &b.PropagationPolicies[i].Spec)
		}
		for i := range b.ClusterPropagationPolicies {
			check(clusterPropagationPolicyKind, b.ClusterPropagationPolicies[i].ObjectMeta, &b.ClusterPropagationPolicies[i].Spec)
		}
		for i := range b.OverridePolicies {
			check(overridePolicyKind, b.OverridePolicies[i].ObjectMeta, &b.OverridePolicies[i].Spec)
		}
		for i := range b.ClusterOverridePolicies {
			check(clusterOverridePolicyKind, b.ClusterOverridePolicies[i].ObjectMeta, &b.ClusterOverridePolicies[i].Spec)
		}
	}
	for _, k := range allPolicyKinds {
		if seen[k.kind] == 0 {
			t.Errorf("no %s was round-tripped", k.kind)
		}
	}
}

func TestAttributePath(t *testing.T) {
	cases := []struct {
		kind     policyKind
		karmada  string
		want     string
		complete bool
		field    string // the attribute's key when the path ends on one
	}{
		{propagationPolicyKind, "placement.replicaScheduling.weightPreference.staticWeightList[1].weight",
			"placement.replica_scheduling.weight_preference.static_weight_list[1].weight", true, "StaticClusterWeight.weight"},
		{propagationPolicyKind, "placement.clusterAffinities[0].clusterNames[2]",
			"placement.cluster_affinities[0].cluster_names[2]", true, ""},
		{propagationPolicyKind, "placement.clusterAffinities[0].overflowAffinities[1].affinityName",
			"placement.cluster_affinities[0].overflow_affinities[1].affinity_name", true, "OverflowClusterAffinity.affinityName"},
		{propagationPolicyKind, "resourceSelectors", "resource_selectors", true, "PropagationSpec.resourceSelectors"},
		{propagationPolicyKind, "placement.clusterTolerations[0].tolerationSeconds",
			"placement.cluster_tolerations[0].toleration_seconds", true, "Toleration.tolerationSeconds"},
		{propagationPolicyKind, "failover.application.purgeMode", "", false, ""},
		{propagationPolicyKind, "placement.bogus", "placement", false, ""},
		{propagationPolicyKind, "placement[0]", "placement", false, ""},
		{overridePolicyKind, "overrideRules[0].overriders.labelsOverrider[0].value[app.kubernetes.io/name]",
			`override_rules[0].overriders.labels_overrider[0].value["app.kubernetes.io/name"]`, true, ""},
		{overridePolicyKind, "overrideRules[3].overriders.fieldOverrider[0]",
			"override_rules[3].overriders.field_overrider[0]", true, ""},
		{overridePolicyKind, "overrideRules[0].overriders.plaintext[0].value",
			"override_rules[0].overriders.plaintext[0].value", true, "PlaintextOverrider.value"},
	}
	for _, tc := range cases {
		p, f, complete := attributePath(tc.kind.fields(), parseFieldPath(tc.karmada), path.Empty())
		if p.String() != tc.want || complete != tc.complete {
			t.Errorf("%s: got %q complete=%v, want %q complete=%v", tc.karmada, p, complete, tc.want, tc.complete)
		}
		key := ""
		if f != nil {
			key = f.key
		}
		if key != tc.field {
			t.Errorf("%s: field %q, want %q", tc.karmada, key, tc.field)
		}
	}
	// Under a base path, as for a policy inside a manifest's list.
	base := path.Root("propagation_policies").AtListIndex(2)
	p, _, _ := attributePath(propagationFields(), parseFieldPath("placement.spreadConstraints[0].maxGroups"), base)
	if want := "propagation_policies[2].placement.spread_constraints[0].max_groups"; p.String() != want {
		t.Errorf("got %q, want %q", p, want)
	}
}

func TestValueAt(t *testing.T) {
	doc := map[string]any{"a": []any{map[string]any{"b": int64(1)}}, "m": map[string]any{"k.x/y": "v"}}
	cases := map[string]any{
		"a[0].b":   int64(1),
		"a[1].b":   nil,
		"a.b":      nil,
		"m[k.x/y]": "v",
		"zzz":      nil,
	}
	for p, want := range cases {
		if got := valueAt(doc, parseFieldPath(p)); got != want {
			t.Errorf("valueAt(%s) = %v, want %v", p, got, want)
		}
	}
}
