package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// built builds each wrapper with build, for the list arguments of the
// policy functions.
func built[W, T any](build func(W) *T, ws []W) []T {
	out := make([]T, 0, len(ws))
	for _, w := range ws {
		out = append(out, *build(w))
	}
	return out
}

func pps(ws ...*apitest.PropagationPolicyWrapper) []api.PropagationPolicy {
	return built((*apitest.PropagationPolicyWrapper).Obj, ws)
}

func cpps(ws ...*apitest.PropagationPolicyWrapper) []api.ClusterPropagationPolicy {
	return built((*apitest.PropagationPolicyWrapper).ClusterObj, ws)
}

// claimID is the comparable part of a Claim.
type claimID struct {
	Kind, Namespace, Name string
	Specificity           policy.Specificity
}

func TestClaimPropagation(t *testing.T) {
	pp := apitest.MakePropagationPolicy
	cpp := apitest.MakeClusterPropagationPolicy
	deploy := apitest.MakeDeployment("web", "prod").Label("app", "web").Obj()
	const d, v = "Deployment", "apps/v1"
	cases := map[string]struct {
		tmpl *unstructured.Unstructured
		pps  []api.PropagationPolicy
		cpps []api.ClusterPropagationPolicy
		want *claimID
	}{
		"nothing matches": {
			tmpl: deploy,
			pps:  pps(pp("other", "prod").SelectKind(v, "StatefulSet")),
			cpps: cpps(cpp("c").SelectKind("v1", "ConfigMap")),
		},
		"namespaced beats cluster-wide even with lower priority and specificity": {
			tmpl: deploy,
			pps:  pps(pp("z-ns", "prod").SelectKind(v, d)),
			cpps: cpps(cpp("a-cluster").SelectName(v, d, "web").Priority(100)),
			want: &claimID{api.KindPropagationPolicy, "prod", "z-ns", policy.MatchKind},
		},
		"namespaced policy in another namespace is ignored": {
			tmpl: deploy,
			pps:  pps(pp("other-ns", "dev").Selector(api.ResourceSelector{APIVersion: v, Kind: d})),
			cpps: cpps(cpp("c").SelectKind(v, d)),
			want: &claimID{api.KindClusterPropagationPolicy, "", "c", policy.MatchKind},
		},
		"higher priority beats higher specificity": {
			tmpl: deploy,
			pps:  pps(pp("by-name", "prod").SelectName(v, d, "web").Priority(1), pp("by-kind", "prod").SelectKind(v, d).Priority(2)),
			want: &claimID{api.KindPropagationPolicy, "prod", "by-kind", policy.MatchKind},
		},
		"nil priority is 0": {
			tmpl: deploy,
			pps:  pps(pp("a-negative", "prod").SelectName(v, d, "web").Priority(-1), pp("b-nil", "prod").SelectKind(v, d)),
			want: &claimID{api.KindPropagationPolicy, "prod", "b-nil", policy.MatchKind},
		},
		"same priority: name beats labels beats kind": {
			tmpl: deploy,
			pps: pps(pp("a-kind", "prod").SelectKind(v, d),
				pp("b-labels", "prod").SelectLabels(v, d, map[string]string{"app": "web"}),
				pp("c-name", "prod").SelectName(v, d, "web")),
			want: &claimID{api.KindPropagationPolicy, "prod", "c-name", policy.MatchName},
		},
		"same priority: labels beat kind": {
			tmpl: deploy,
			pps: pps(pp("a-kind", "prod").SelectKind(v, d),
				pp("b-labels", "prod").SelectLabels(v, d, map[string]string{"app": "web"})),
			want: &claimID{api.KindPropagationPolicy, "prod", "b-labels", policy.MatchLabelSelector},
		},
		"all equal: lower name wins, whatever the order": {
			tmpl: deploy,
			pps:  pps(pp("web-b", "prod").SelectKind(v, d), pp("web-a", "prod").SelectKind(v, d), pp("web-c", "prod").SelectKind(v, d)),
			want: &claimID{api.KindPropagationPolicy, "prod", "web-a", policy.MatchKind},
		},
		"cluster-wide: same tie-breakers": {
			tmpl: deploy,
			cpps: cpps(cpp("b").SelectKind(v, d).Priority(3), cpp("a").SelectKind(v, d).Priority(3), cpp("z").SelectName(v, d, "web")),
			want: &claimID{api.KindClusterPropagationPolicy, "", "a", policy.MatchKind},
		},
		"cluster-scoped template only by cluster-wide policy": {
			tmpl: apitest.MakeTemplate("v1", "Namespace", "shop", "").Obj(),
			pps:  pps(pp("ns", "").SelectKind("v1", "Namespace")),
			cpps: cpps(cpp("namespaces").SelectKind("v1", "Namespace")),
			want: &claimID{api.KindClusterPropagationPolicy, "", "namespaces", policy.MatchKind},
		},
		"policies being deleted are skipped": {
			tmpl: deploy,
			pps:  pps(pp("a", "prod").SelectName(v, d, "web").Deleting(), pp("b", "prod").SelectKind(v, d)),
			want: &claimID{api.KindPropagationPolicy, "prod", "b", policy.MatchKind},
		},
		"the best selector of a policy counts": {
			tmpl: deploy,
			pps: pps(pp("a", "prod").SelectKind(v, d),
				pp("b", "prod").SelectKind("v1", "ConfigMap").SelectName(v, d, "web")),
			want: &claimID{api.KindPropagationPolicy, "prod", "b", policy.MatchName},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			claim, ok := policy.ClaimPropagation(tc.tmpl, tc.pps, tc.cpps)
			var got *claimID
			if ok {
				got = &claimID{claim.Kind, claim.Namespace, claim.Name, claim.Specificity}
				if claim.Spec == nil {
					t.Error("claim has no spec")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claim (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaimSpecIsTheClaimingPolicys(t *testing.T) {
	list := pps(apitest.MakePropagationPolicy("a", "prod").SelectKind("v1", "ConfigMap"),
		apitest.MakePropagationPolicy("b", "prod").SelectName("v1", "ConfigMap", "cfg").Priority(1))
	claim, ok := policy.ClaimPropagation(apitest.MakeConfigMap("cfg", "prod").Obj(), list, nil)
	if !ok {
		t.Fatal("no claim")
	}
	if claim.Spec != &list[1].Spec {
		t.Errorf("claim spec points at %p, want policy b's spec %p", claim.Spec, &list[1].Spec)
	}
}

func TestClaimNilTemplate(t *testing.T) {
	if _, ok := policy.ClaimPropagation(nil, nil, cpps(apitest.MakeClusterPropagationPolicy("c").SelectKind("v1", "Pod"))); ok {
		t.Error("a nil template was claimed")
	}
}
