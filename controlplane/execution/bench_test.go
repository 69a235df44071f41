package execution

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// BenchmarkDistribution measures, for 200 objects (ConfigMaps and
// Deployments, alternating) applied one after another, the time from the
// Apply call until the object exists in all three loopback members: Apply
// returns once every member has answered its apply, i.e. stored it. It
// reports the p50 and p99 of those durations over every round; the goal is
// a p99 of at most 150 ms.
func BenchmarkDistribution(b *testing.B) {
	const objects = 200
	e := startEnv(b)
	e.makeNamespace(b, "bench")
	ex := e.executor()
	var durations []time.Duration
	round := 0
	for b.Loop() {
		round++
		b.StopTimer()
		reqs := make([]ApplyRequest, objects)
		for i := range reqs {
			name := fmt.Sprintf("r%d-%03d", round, i)
			tmpl := apitest.MakeConfigMap(name, "bench").Data("round", name).Obj()
			if i%2 == 1 {
				tmpl = apitest.MakeDeployment(name, "bench").Replicas(2).Obj()
			}
			reqs[i] = applyReq(b, tmpl, e.names...)
		}
		b.StartTimer()
		for _, req := range reqs {
			start := time.Now()
			res := ex.Apply(b.Context(), req)
			durations = append(durations, time.Since(start))
			if err := res.Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	for _, c := range e.names {
		if got := len(e.listNames(b, c, configMaps, "bench")) + len(e.listNames(b, c, deployments, "bench")); got != objects*round {
			b.Fatalf("%s holds %d objects, want %d", c, got, objects*round)
		}
	}
	slices.Sort(durations)
	b.ReportMetric(percentile(durations, 50), "p50-ms")
	b.ReportMetric(percentile(durations, 99), "p99-ms")
}

// percentile returns the p-th percentile (nearest rank) of sorted
// durations, in milliseconds.
func percentile(sorted []time.Duration, p int) float64 {
	rank := (len(sorted)*p + 99) / 100
	return float64(sorted[max(rank, 1)-1].Microseconds()) / 1000
}
