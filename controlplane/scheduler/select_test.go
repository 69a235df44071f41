package scheduler

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// scored builds a candidate the way the scorers and the estimator would have
// described it.
func scored(w *apitest.ClusterWrapper, score, available int64) candidate {
	return candidate{cluster: w.Obj(), score: score, available: available}
}

func names(cs []candidate) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].name()
	}
	return out
}

func spread(constraints ...api.SpreadConstraint) spreadPlan { return planSpread(constraints) }

func byField(f api.SpreadFieldValue, minG, maxG int) api.SpreadConstraint {
	return api.SpreadConstraint{SpreadByField: f, MinGroups: minG, MaxGroups: maxG}
}

func TestSelectClusters(t *testing.T) {
	// Karmada's documented example: scores and available replicas.
	karmada := []candidate{
		scored(apitest.MakeCluster("member4"), 60, 50),
		scored(apitest.MakeCluster("member2"), 40, 60),
		scored(apitest.MakeCluster("member3"), 30, 80),
		scored(apitest.MakeCluster("member1"), 20, 40),
	}
	c := func(name, region, zone, provider string, score, available int64) candidate {
		return scored(apitest.MakeCluster(name).Region(region).Zones(zone).Provider(provider), score, available)
	}
	// Three regions: us (3 clusters), eu (2), ap (1). Sorted by preference.
	world := []candidate{
		c("us-1", "us", "us-a", "aws", 100, 10),
		c("eu-1", "eu", "eu-a", "gcp", 100, 5),
		c("us-3", "us", "us-a", "aws", 50, 20),
		c("us-2", "us", "us-b", "aws", 0, 30),
		c("ap-1", "ap", "ap-a", "aws", 0, 25),
		c("eu-2", "eu", "eu-b", "gcp", 0, 4),
	}
	// The best-scored region is the smallest.
	lopsided := []candidate{
		c("small-1", "small", "s", "aws", 100, 10),
		c("big-1", "big", "b", "aws", 0, 50),
		c("mid-1", "mid", "m", "aws", 0, 30),
	}
	// Racks are labels; the rack-less cluster would have been filtered out.
	racks := []candidate{
		scored(apitest.MakeCluster("r1-a").Label("rack", "r1"), 0, 9),
		scored(apitest.MakeCluster("r2-a").Label("rack", "r2"), 0, 8),
		scored(apitest.MakeCluster("r1-b").Label("rack", "r1"), 0, 7),
		scored(apitest.MakeCluster("r3-a").Label("rack", "r3"), 0, 1),
	}
	cases := []struct {
		name    string
		cands   []candidate
		plan    spreadPlan
		need    int64
		want    []string
		wantErr string
	}{
		{"no constraints: everything", karmada, spread(), 1000,
			[]string{"member4", "member2", "member3", "member1"}, ""},
		{"by cluster, Divided 120: member2 swapped for member3", karmada,
			spread(byField(api.SpreadByFieldCluster, 1, 2)), 120, []string{"member4", "member3"}, ""},
		{"by cluster, Divided 200: no enough resource", karmada,
			spread(byField(api.SpreadByFieldCluster, 1, 2)), 200, nil, "no enough resource"},
		{"by cluster, Duplicated: best two by score", karmada,
			spread(byField(api.SpreadByFieldCluster, 1, 2)), -1, []string{"member4", "member2"}, ""},
		{"by cluster, too few clusters", karmada,
			spread(byField(api.SpreadByFieldCluster, 5, 6)), -1, nil, "less than spreadConstraint.minGroups 5"},
		{"by cluster, no maximum", karmada,
			spread(byField(api.SpreadByFieldCluster, 1, 0)), -1, []string{"member4", "member2", "member3", "member1"}, ""},
		{"empty constraint means by cluster", karmada,
			spread(api.SpreadConstraint{MaxGroups: 1}), -1, []string{"member4"}, ""},
		{"by region, one region: the best one, all its clusters", world,
			spread(byField(api.SpreadByFieldRegion, 1, 1)), -1, []string{"us-1", "us-3", "us-2"}, ""},
		{"by region 2..3 with cluster max 3: best of each region, then by preference", world,
			spread(byField(api.SpreadByFieldRegion, 2, 3), byField(api.SpreadByFieldCluster, 1, 3)), -1,
			[]string{"us-1", "eu-1", "us-3"}, ""},
		{"by region: more clusters wanted than the best region has", world,
			spread(byField(api.SpreadByFieldRegion, 1, 2), byField(api.SpreadByFieldCluster, 4, 4)), -1,
			[]string{"us-1", "eu-1", "us-3", "us-2"}, ""},
		{"by region, Divided: best region too small, swapped for the largest", lopsided,
			spread(byField(api.SpreadByFieldRegion, 1, 1)), 40, []string{"big-1"}, ""},
		{"by region, Duplicated: best region regardless of size", lopsided,
			spread(byField(api.SpreadByFieldRegion, 1, 1)), -1, []string{"small-1"}, ""},
		{"by region, Divided: two regions needed for 70", world,
			spread(byField(api.SpreadByFieldRegion, 1, 2)), 70, []string{"us-1", "ap-1", "us-3", "us-2"}, ""},
		{"by region, Divided: capacity swap among fillers", world,
			spread(byField(api.SpreadByFieldRegion, 1, 1), byField(api.SpreadByFieldCluster, 1, 2)), 40,
			[]string{"us-1", "us-2"}, ""},
		{"by region, Divided: not enough anywhere", world,
			spread(byField(api.SpreadByFieldRegion, 1, 3)), 1000, nil, "no enough resource"},
		{"by region: too few regions", world,
			spread(byField(api.SpreadByFieldRegion, 4, 4)), -1, nil, "less than spreadConstraint.minGroups 4"},
		{"by zone selects too (beyond Karmada)", world,
			spread(byField(api.SpreadByFieldZone, 2, 2)), -1, []string{"us-1", "eu-1", "us-3"}, ""},
		{"by provider selects too (beyond Karmada)", world,
			spread(byField(api.SpreadByFieldProvider, 1, 1)), -1, []string{"us-1", "us-3", "us-2", "ap-1"}, ""},
		{"provider is coarser than region and selects; region is checked", world,
			spread(byField(api.SpreadByFieldRegion, 2, 2), byField(api.SpreadByFieldProvider, 1, 1)), -1,
			[]string{"us-1", "us-3", "us-2", "ap-1"}, ""},
		{"by label selects too (beyond Karmada)", racks,
			spread(api.SpreadConstraint{SpreadByLabel: "rack", MinGroups: 2, MaxGroups: 2}, byField(api.SpreadByFieldCluster, 1, 2)), 17,
			[]string{"r1-a", "r2-a"}, ""},
		{"by label: one group more when the best two cannot hold the replicas", racks,
			spread(api.SpreadConstraint{SpreadByLabel: "rack", MinGroups: 2, MaxGroups: 3}, byField(api.SpreadByFieldCluster, 1, 0)), 25,
			[]string{"r1-a", "r2-a", "r3-a", "r1-b"}, ""},
		{"secondary constraint violated", world,
			spread(byField(api.SpreadByFieldRegion, 3, 3), byField(api.SpreadByFieldProvider, 1, 1)), -1,
			nil, "span 2 groups by region, want between 3 and 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cands := append([]candidate(nil), tc.cands...)
			got, err := new(scratch).selectClusters(cands, tc.plan, tc.need)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanSpread(t *testing.T) {
	plan := planSpread([]api.SpreadConstraint{
		{SpreadByLabel: "rack", MinGroups: 1},
		byField(api.SpreadByFieldZone, 1, 2),
		byField(api.SpreadByFieldCluster, 2, 4),
		byField(api.SpreadByFieldRegion, 1, 1),
	})
	if plan.cluster == nil || plan.cluster.MaxGroups != 4 {
		t.Errorf("cluster constraint = %+v, want the one with maxGroups 4", plan.cluster)
	}
	if plan.group == nil || plan.group.SpreadByField != api.SpreadByFieldRegion {
		t.Errorf("group constraint = %+v, want region", plan.group)
	}
	var others []string
	for _, o := range plan.others {
		others = append(others, groupKind(&o))
	}
	if diff := cmp.Diff([]string{"zone", `label "rack"`}, others); diff != "" {
		t.Errorf("other constraints (-want +got):\n%s", diff)
	}
}
