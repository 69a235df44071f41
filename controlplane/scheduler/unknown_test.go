package scheduler_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	policypkg "github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// TestClusterAffinityFilterUnknownNames follows Karmada's ClusterAffinity
// filter: a cluster outside clusterNames is left out, so a typo leaves
// every cluster out. The fit error then says first which listed name is
// no cluster, where the policy lists it and the closest cluster name, on
// both scheduling paths (Schedule, as preview and Terraform call it, and a
// Snapshot, as continuous mode does).
func TestClusterAffinityFilterUnknownNames(t *testing.T) {
	fleet := clusters(apitest.MakeCluster("east"), apitest.MakeCluster("west"), apitest.MakeCluster("north"))
	const notAffine = "cluster does not match the placement cluster affinity"
	term := func(name string, a *apitest.AffinityWrapper) api.ClusterAffinityTerm {
		return api.ClusterAffinityTerm{AffinityName: name, ClusterAffinity: *a.Obj()}
	}
	cases := []struct {
		name      string
		placement api.Placement
		policy    string
		want      string // the error; "" schedules
		unknown   []scheduler.UnknownCluster
	}{
		{
			name:      "a typo names the policy, the attribute and the closest cluster",
			placement: api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("esat").Obj()},
			policy:    "PropagationPolicy default/web",
			want: `PropagationPolicy default/web: spec.placement.clusterAffinity.clusterNames[0] "esat" is not a cluster of the fleet (the closest is "east"); ` +
				"0/3 clusters are available: east: " + notAffine + "; north: " + notAffine + "; west: " + notAffine,
			unknown: []scheduler.UnknownCluster{{Path: "spec.placement.clusterAffinity.clusterNames[0]", Name: "esat", Closest: "east"}},
		},
		{
			name:      "several unknown names, in the order listed, without a policy",
			placement: api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("wset", "nroth").Obj()},
			want: `spec.placement.clusterAffinity.clusterNames[0] "wset" is not a cluster of the fleet (the closest is "west"); ` +
				`spec.placement.clusterAffinity.clusterNames[1] "nroth" is not a cluster of the fleet (the closest is "north"); ` +
				"0/3 clusters are available: east: " + notAffine + "; north: " + notAffine + "; west: " + notAffine,
			unknown: []scheduler.UnknownCluster{
				{Path: "spec.placement.clusterAffinity.clusterNames[0]", Name: "wset", Closest: "west"},
				{Path: "spec.placement.clusterAffinity.clusterNames[1]", Name: "nroth", Closest: "north"},
			},
		},
		{
			name: "clusterAffinities terms are named by index",
			placement: api.Placement{ClusterAffinities: []api.ClusterAffinityTerm{
				term("primary", apitest.MakeAffinity().Names("eastt")),
			}},
			policy: "ClusterPropagationPolicy all",
			want: `ClusterPropagationPolicy all: spec.placement.clusterAffinities[0].clusterNames[0] "eastt" is not a cluster of the fleet (the closest is "east"); ` +
				`cluster affinity term "primary": ` + "0/3 clusters are available: east: " + notAffine + "; north: " + notAffine + "; west: " + notAffine,
			unknown: []scheduler.UnknownCluster{{Path: "spec.placement.clusterAffinities[0].clusterNames[0]", Name: "eastt", Closest: "east"}},
		},
		{
			name:      "known names filtered out for another reason say nothing of names",
			placement: api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("east").Exclude("east").Obj()},
			want:      "0/3 clusters are available: east: " + notAffine + "; north: " + notAffine + "; west: " + notAffine,
		},
		{
			name:      "a typo beside a cluster that fits schedules there, as in Karmada",
			placement: api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("esat", "west").Obj()},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := workload(0, tc.placement)
			b.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "web"}
			b.Policy = tc.policy
			for path, schedule := range map[string]func() (scheduler.Result, error){
				"Schedule": func() (scheduler.Result, error) { return scheduler.Schedule(fleet, b) },
				"Snapshot": func() (scheduler.Result, error) { return scheduler.NewSnapshot(fleet).Schedule(b) },
			} {
				_, err := schedule()
				if tc.want == "" {
					if err != nil {
						t.Errorf("%s: %v", path, err)
					}
					continue
				}
				if err == nil || err.Error() != tc.want {
					t.Errorf("%s: error = %v\nwant    %s", path, err, tc.want)
					continue
				}
				var fit *scheduler.FitError
				if !errors.As(err, &fit) {
					t.Fatalf("%s: %T is not a FitError", path, err)
				}
				if diff := cmp.Diff(tc.unknown, fit.Unknown); diff != "" {
					t.Errorf("%s: Unknown (-want +got):\n%s", path, diff)
				}
			}
		})
	}
}

// TestBindingForPolicy: continuous mode schedules a ResourceBinding through
// BindingFor, which names the claiming policy from Karmada's claim
// annotations, so its fit error (the binding's Scheduled condition) names
// the policy as preview and Terraform do.
func TestBindingForPolicy(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"namespaced", map[string]string{policypkg.AnnotationClaimPolicyName: "web", policypkg.AnnotationClaimPolicyNamespace: "default"}, "PropagationPolicy default/web"},
		{"cluster-wide", map[string]string{policypkg.AnnotationClaimClusterPolicyName: "all"}, "ClusterPropagationPolicy all"},
		{"unclaimed", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rb := &api.ResourceBinding{}
			rb.Annotations = tc.annotations
			rb.Spec.Resource = api.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "web"}
			placement := api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("esat").Obj()}
			b := scheduler.BindingFor(rb, placement)
			if b.Policy != tc.want {
				t.Errorf("Policy = %q, want %q", b.Policy, tc.want)
			}
			_, err := scheduler.NewSnapshot(clusters(apitest.MakeCluster("east"))).Schedule(b)
			var fit *scheduler.FitError
			if !errors.As(err, &fit) || fit.Policy != tc.want || len(fit.Unknown) != 1 || fit.Unknown[0].Closest != "east" {
				t.Errorf("error %v, want a FitError naming %q and the unknown esat", err, tc.want)
			}
		})
	}
}
