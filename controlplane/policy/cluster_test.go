package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

func TestClusterMatches(t *testing.T) {
	aff := apitest.MakeAffinity
	const (
		in       = corev1.NodeSelectorOpIn
		notIn    = corev1.NodeSelectorOpNotIn
		exists   = corev1.NodeSelectorOpExists
		notExist = corev1.NodeSelectorOpDoesNotExist
	)
	// east: aws/us-east in two zones; west: region only, one zone through
	// the deprecated zone field; bare: no facts at all.
	east := apitest.MakeCluster("east").Label("tier", "prod").Provider("aws").Region("us-east").Zones("use1-a", "use1-b").Obj()
	west := apitest.MakeCluster("west").Label("tier", "dev").Region("eu-west").Zone("euw1-a").Obj()
	bare := apitest.MakeCluster("bare").Obj()
	all := []*api.Cluster{east, west, bare}

	cases := map[string]struct {
		affinity *api.ClusterAffinity
		want     []string
	}{
		"nil affinity matches all":   {affinity: nil, want: []string{"east", "west", "bare"}},
		"empty affinity matches all": {affinity: aff().Obj(), want: []string{"east", "west", "bare"}},
		"cluster names":              {affinity: aff().Names("west", "gone").Obj(), want: []string{"west"}},
		"exclude":                    {affinity: aff().Exclude("east").Obj(), want: []string{"west", "bare"}},
		"exclude wins over names":    {affinity: aff().Names("east", "west").Exclude("east").Obj(), want: []string{"west"}},
		"labels":                     {affinity: aff().Label("tier", "prod").Obj(), want: []string{"east"}},
		"label expression": {
			affinity: aff().LabelExpression("tier", metav1.LabelSelectorOpNotIn, "prod").Obj(),
			want:     []string{"west", "bare"},
		},
		"invalid label selector matches nothing": {
			affinity: aff().LabelExpression("tier", "Near", "prod").Obj(),
		},
		"labels AND names": {affinity: aff().Label("tier", "prod").Names("west").Obj()},
		"provider In":      {affinity: aff().Field(api.ProviderField, in, "aws", "gcp").Obj(), want: []string{"east"}},
		"provider NotIn matches clusters without provider": {
			affinity: aff().Field(api.ProviderField, notIn, "aws").Obj(), want: []string{"west", "bare"},
		},
		"provider Exists":       {affinity: aff().Field(api.ProviderField, exists).Obj(), want: []string{"east"}},
		"provider DoesNotExist": {affinity: aff().Field(api.ProviderField, notExist).Obj(), want: []string{"west", "bare"}},
		"region In":             {affinity: aff().Field(api.RegionField, in, "eu-west").Obj(), want: []string{"west"}},
		"region NotIn":          {affinity: aff().Field(api.RegionField, notIn, "eu-west").Obj(), want: []string{"east", "bare"}},
		"region Exists":         {affinity: aff().Field(api.RegionField, exists).Obj(), want: []string{"east", "west"}},
		"region DoesNotExist":   {affinity: aff().Field(api.RegionField, notExist).Obj(), want: []string{"bare"}},
		// Zone cases follow Karmada's current matchZones: In admits a
		// cluster when any one of its zones is listed.
		"zone In admits a cluster with one of its zones listed (matchZones)": {
			affinity: aff().Field(api.ZoneField, in, "use1-a", "euw1-a").Obj(), want: []string{"east", "west"},
		},
		"zone In with only the second zone listed (matchZones)": {
			affinity: aff().Field(api.ZoneField, in, "use1-b").Obj(), want: []string{"east"},
		},
		"zone In with all zones": {
			affinity: aff().Field(api.ZoneField, in, "use1-a", "use1-b").Obj(), want: []string{"east"},
		},
		"zone In with no zone listed": {
			affinity: aff().Field(api.ZoneField, in, "usw2-a").Obj(),
		},
		"zone NotIn needs no zone listed (matchZones)": {
			affinity: aff().Field(api.ZoneField, notIn, "use1-b").Obj(), want: []string{"west", "bare"},
		},
		"zone Exists":       {affinity: aff().Field(api.ZoneField, exists).Obj(), want: []string{"east", "west"}},
		"zone DoesNotExist": {affinity: aff().Field(api.ZoneField, notExist).Obj(), want: []string{"bare"}},
		"field expressions are ANDed": {
			affinity: aff().Field(api.RegionField, exists).Field(api.ProviderField, notIn, "aws").Obj(), want: []string{"west"},
		},
		"unknown field key matches nothing": {affinity: aff().Field("planet", in, "earth").Obj()},
		"Gt on a field matches nothing":     {affinity: aff().Field(api.RegionField, corev1.NodeSelectorOpGt, "1").Obj()},
		"labels AND fields AND names": {
			affinity: aff().Label("tier", "prod").Field(api.RegionField, in, "us-east").Names("east").Obj(),
			want:     []string{"east"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, c := range all {
				if policy.ClusterMatches(tc.affinity, c) {
					got = append(got, c.Name)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("matching clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClusterMatchesNilCluster(t *testing.T) {
	if policy.ClusterMatches(apitest.MakeAffinity().Obj(), nil) {
		t.Error("a nil cluster matched a non-nil affinity")
	}
}
