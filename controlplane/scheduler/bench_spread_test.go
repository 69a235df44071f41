package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// labelledFleet is fleet(n) with a label unique to every cluster, so a
// spread constraint by that label makes one group per cluster: the shape
// that made group selection grow faster than cubic.
func labelledFleet(n int) []*api.Cluster {
	out := fleet(n)
	for i, c := range out {
		c.Labels["rack"] = fmt.Sprintf("rack-%05d", i)
	}
	return out
}

// previousOnSmall is a previous result on every cluster of fleet(n) with
// the smaller capacity (i%64 < 32: about 254 replicas against 382). Locality
// puts them first, so selection must swap many groups to hold the replicas.
func previousOnSmall(n int) []api.TargetCluster {
	var out []api.TargetCluster
	for i := 0; i < n; i++ {
		if i%64 < 32 {
			out = append(out, api.TargetCluster{Name: fmt.Sprintf("member-%05d", i), Replicas: 10})
		}
	}
	return out
}

// BenchmarkScheduleSpreadByLabel measures selection over one group per
// cluster at 1,000 clusters. Each cluster of fleet holds 254 or 382 replicas
// of benchBinding's pod, so "fits" needs about 320 clusters (found after
// many group counts are ruled out) and "short" wants more than the fleet
// holds (every group count is ruled out). The "scale-up" cases start from a
// previous result on the smaller clusters, which locality ranks first.
func BenchmarkScheduleSpreadByLabel(b *testing.B) {
	const n = 1000
	snapshot := labelledFleet(n)
	cases := []struct {
		name     string
		replicas int32
		p        api.Placement
		previous []api.TargetCluster
		wantErr  bool
	}{
		{"fits", 100_000, placement(policy().DynamicWeight().SpreadByLabel("rack", 2, 0)), nil, false},
		{"fits-cluster-bound", 100_000, placement(policy().DynamicWeight().SpreadByLabel("rack", 2, 0).
			Spread(api.SpreadByFieldCluster, 2, 600)), nil, false},
		{"short", 1_000_000, placement(policy().DynamicWeight().SpreadByLabel("rack", 2, 0)), nil, true},
		{"scale-up", 200_000, placement(policy().DynamicWeight().SpreadByLabel("rack", 2, 0)), previousOnSmall(n), false},
		{"scale-up-short", 1_000_000, placement(policy().DynamicWeight().SpreadByLabel("rack", 2, 0)),
			previousOnSmall(n), true},
		{"region-fits", 100_000, placement(policy().DynamicWeight().Spread(api.SpreadByFieldRegion, 2, 0).
			Spread(api.SpreadByFieldCluster, 2, 600)), nil, false},
	}
	for _, bc := range cases {
		binding := benchBinding(bc.p)
		binding.Replicas = bc.replicas
		binding.Previous = bc.previous
		b.Run(fmt.Sprintf("clusters=%d/%s", n, bc.name), func(b *testing.B) {
			check := func(err error) {
				if (err != nil) != bc.wantErr {
					b.Fatalf("Schedule: err = %v, want error %v", err, bc.wantErr)
				}
			}
			_, err := scheduler.Schedule(snapshot, binding)
			check(err)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, err := scheduler.Schedule(snapshot, binding)
				check(err)
			}
		})
	}
}
