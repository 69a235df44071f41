package policy_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func ops(ws ...*apitest.OverridePolicyWrapper) []api.OverridePolicy {
	return built((*apitest.OverridePolicyWrapper).Obj, ws)
}

func cops(ws ...*apitest.OverridePolicyWrapper) []api.ClusterOverridePolicy {
	return built((*apitest.OverridePolicyWrapper).ClusterObj, ws)
}

// ids renders the order as "Kind ns/name@specificity".
func ids(list []policy.AppliedOverride) []string {
	var out []string
	for _, a := range list {
		out = append(out, fmt.Sprintf("%s %s/%s@%d", a.Kind, a.Namespace, a.Name, a.Specificity))
	}
	return out
}

func TestMatchOverridesOrder(t *testing.T) {
	op := apitest.MakeOverridePolicy
	cop := apitest.MakeClusterOverridePolicy
	deploy := apitest.MakeDeployment("web", "prod").Label("app", "web").Obj()
	const d, v = "Deployment", "apps/v1"
	cases := map[string]struct {
		tmpl *unstructured.Unstructured
		ops  []api.OverridePolicy
		cops []api.ClusterOverridePolicy
		want []string
	}{
		"cluster-wide first, then namespaced; specificity ascending; then name": {
			tmpl: deploy,
			ops: ops(op("n-name", "prod").SelectName(v, d, "web"),
				op("n-kind-b", "prod").SelectKind(v, d),
				op("n-labels", "prod").SelectLabels(v, d, map[string]string{"app": "web"}),
				op("n-kind-a", "prod").SelectKind(v, d),
				op("n-all", "prod")),
			cops: cops(cop("c-name").SelectName(v, d, "web"), cop("c-kind").SelectKind(v, d)),
			want: []string{
				"ClusterOverridePolicy /c-kind@1",
				"ClusterOverridePolicy /c-name@3",
				"OverridePolicy prod/n-all@1",
				"OverridePolicy prod/n-kind-a@1",
				"OverridePolicy prod/n-kind-b@1",
				"OverridePolicy prod/n-labels@2",
				"OverridePolicy prod/n-name@3",
			},
		},
		"non-matching, other-namespace and deleting policies are left out": {
			tmpl: deploy,
			ops: ops(op("other-ns", "dev").SelectKind(v, d),
				op("other-kind", "prod").SelectKind("v1", "ConfigMap"),
				op("going", "prod").SelectKind(v, d).Deleting(),
				op("kept", "prod").SelectKind(v, d)),
			cops: cops(cop("other-name").SelectName(v, d, "api")),
			want: []string{"OverridePolicy prod/kept@1"},
		},
		"cluster-scoped template gets only cluster-wide policies": {
			tmpl: apitest.MakeTemplate("v1", "Namespace", "shop", "").Obj(),
			ops:  ops(op("ns", "").SelectKind("v1", "Namespace")),
			cops: cops(cop("all")),
			want: []string{"ClusterOverridePolicy /all@1"},
		},
		// Karmada's getOverridersFromOverridePolicies ranks a policy without
		// selectors PriorityMatchAll, like a kind-only selector: the two tie
		// and are applied by ascending name, so the selector-less "z-all"
		// applies after (and wins over) "a-kind".
		"selector-less and kind-only policies tie and go by name (getOverridersFromOverridePolicies)": {
			tmpl: deploy,
			ops: ops(op("z-all", "prod"),
				op("a-kind", "prod").SelectKind(v, d),
				op("m-labels", "prod").SelectLabels(v, d, map[string]string{"app": "web"})),
			cops: cops(cop("z-all"), cop("a-kind").SelectKind(v, d)),
			want: []string{
				"ClusterOverridePolicy /a-kind@1",
				"ClusterOverridePolicy /z-all@1",
				"OverridePolicy prod/a-kind@1",
				"OverridePolicy prod/z-all@1",
				"OverridePolicy prod/m-labels@2",
			},
		},
		"nothing applies": {
			tmpl: deploy,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ids(policy.MatchOverrides(tc.tmpl, tc.ops, tc.cops))); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchOverridesRules(t *testing.T) {
	west := apitest.MakeAffinity().Names("west").Obj()
	image := api.Overriders{ImageOverrider: []api.ImageOverrider{{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "eu.io"}}}
	list := ops(
		apitest.MakeOverridePolicy("deprecated", "prod").Deprecated(west, image),
		apitest.MakeOverridePolicy("rules", "prod").Rule(nil, image).Rule(west, image),
	)
	got := policy.MatchOverrides(apitest.MakeDeployment("web", "prod").Obj(), list, nil)
	want := []policy.AppliedOverride{
		{Kind: api.KindOverridePolicy, Namespace: "prod", Name: "deprecated", Specificity: policy.MatchKind, Rules: []api.RuleWithCluster{{TargetCluster: west, Overriders: image}}},
		{Kind: api.KindOverridePolicy, Namespace: "prod", Name: "rules", Specificity: policy.MatchKind, Rules: []api.RuleWithCluster{{Overriders: image}, {TargetCluster: west, Overriders: image}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applied overrides (-want +got):\n%s", diff)
	}
	if policy.MatchOverrides(nil, list, nil) != nil {
		t.Error("a nil template got overrides")
	}
}
