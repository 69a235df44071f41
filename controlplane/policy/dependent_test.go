package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// TestMissingDependentOverrides follows Karmada's IsDependentOverridesPresent
// and IsDependentClusterOverridesPresent (pkg/util/helper/policy.go).
func TestMissingDependentOverrides(t *testing.T) {
	op := func(name, ns string) api.OverridePolicy { return *apitest.MakeOverridePolicy(name, ns).Obj() }
	cop := func(name string) api.ClusterOverridePolicy {
		return *apitest.MakeClusterOverridePolicy(name).ClusterObj()
	}
	claim := func(kind, ns string, deps ...string) policy.Claim {
		spec := apitest.MakePropagationPolicy("p", ns).DependentOverrides(deps...).Spec()
		return policy.Claim{Kind: kind, Namespace: ns, Name: "p", Spec: &spec}
	}
	cases := map[string]struct {
		claim policy.Claim
		ops   []api.OverridePolicy
		cops  []api.ClusterOverridePolicy
		want  []string
	}{
		"none named": {claim: claim(api.KindPropagationPolicy, "prod")},
		"all present": {
			claim: claim(api.KindPropagationPolicy, "prod", "a", "b"),
			ops:   []api.OverridePolicy{op("b", "prod"), op("a", "prod")},
		},
		"missing in order, once": {
			claim: claim(api.KindPropagationPolicy, "prod", "z", "a", "z", "b"),
			ops:   []api.OverridePolicy{op("a", "prod")},
			want:  []string{"z", "b"},
		},
		"an override policy in another namespace does not count": {
			claim: claim(api.KindPropagationPolicy, "prod", "a"),
			ops:   []api.OverridePolicy{op("a", "dev")},
			want:  []string{"a"},
		},
		"a namespaced policy is not satisfied by a cluster override policy": {
			claim: claim(api.KindPropagationPolicy, "prod", "a"),
			cops:  []api.ClusterOverridePolicy{cop("a")},
			want:  []string{"a"},
		},
		"a cluster-wide policy waits for cluster override policies": {
			claim: claim(api.KindClusterPropagationPolicy, "", "a", "b"),
			ops:   []api.OverridePolicy{op("a", "prod")},
			cops:  []api.ClusterOverridePolicy{cop("b")},
			want:  []string{"a"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := policy.MissingDependentOverrides(tc.claim, tc.ops, tc.cops)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}
