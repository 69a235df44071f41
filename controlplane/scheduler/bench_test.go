package scheduler_test

import (
	"fmt"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

var benchSizes = []int{10, 100, 1000, 5000}

// fleet builds n realistic clusters: ten regions, three zones each, two
// providers, a dozen served APIs, node resources, and a NoSchedule taint on
// every twentieth cluster.
func fleet(n int) []*api.Cluster {
	out := make([]*api.Cluster, n)
	for i := 0; i < n; i++ {
		region := fmt.Sprintf("region-%d", i%10)
		w := apitest.MakeCluster(fmt.Sprintf("member-%05d", i)).
			Region(region).Zones(fmt.Sprintf("%s-%c", region, 'a'+i%3)).
			Provider([]string{"aws", "gcp"}[i%2]).
			Label("env", "prod").Label("tier", strconv.Itoa(i%4)).
			APIs("v1/ConfigMap", "v1/Secret", "v1/Service", "v1/ServiceAccount", "v1/PersistentVolumeClaim",
				"apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/DaemonSet", "batch/v1/Job",
				"batch/v1/CronJob", "networking.k8s.io/v1/Ingress", "policy/v1/PodDisruptionBudget").
			Ready().
			Allocatable(corev1.ResourcePods, "1100").
			Allocatable(corev1.ResourceCPU, strconv.Itoa(64+i%64)).
			Allocatable(corev1.ResourceMemory, "512Gi").
			Allocated(corev1.ResourceCPU, strconv.Itoa(i%32)).
			Allocated(corev1.ResourceMemory, "100Gi").
			Allocating(corev1.ResourceCPU, "500m")
		if i%20 == 19 {
			w.Taint("dedicated", "batch", corev1.TaintEffectNoSchedule)
		}
		out[i] = w.Obj()
	}
	return out
}

// benchPlacements are the placements measured.
func benchPlacements() []struct {
	name string
	p    api.Placement
} {
	clouds := apitest.MakeAffinity().Field("provider", corev1.NodeSelectorOpIn, "aws", "gcp").Obj()
	env := apitest.MakeAffinity().Label("env", "prod").Obj()
	eastern := apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn, "region-0", "region-1", "region-2").Obj()
	western := apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpNotIn, "region-0", "region-1", "region-2").Obj()
	return []struct {
		name string
		p    api.Placement
	}{
		{"Duplicated", placement(policy().Duplicated().Affinity(clouds))},
		// Karmada ignores spread constraints for static weights; the
		// constraint is kept to measure that it costs nothing.
		{"StaticWeightedSpread", placement(policy().Affinity(clouds).StaticWeight(*eastern, 3).StaticWeight(*western, 1).
			Spread(api.SpreadByFieldCluster, 1, 0))},
		{"DynamicWeighted", placement(policy().Affinity(clouds).DynamicWeight())},
		// A label selector is parsed by policy.ClusterMatches on every call;
		// this variant shows that cost.
		{"DuplicatedLabelAffinity", placement(policy().Duplicated().Affinity(env))},
	}
}

func benchBinding(p api.Placement) scheduler.Binding {
	b := workload(1000, p)
	b.ReplicaRequirements = &api.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("250m"),
		corev1.ResourceMemory: resource.MustParse("512Mi"),
	}}
	return b
}

func BenchmarkSchedule(b *testing.B) {
	for _, n := range benchSizes {
		snapshot := fleet(n)
		for _, bp := range benchPlacements() {
			binding := benchBinding(bp.p)
			b.Run(fmt.Sprintf("clusters=%d/%s", n, bp.name), func(b *testing.B) {
				benchDecisions(b, func() error {
					_, err := scheduler.Schedule(snapshot, binding)
					return err
				})
			})
		}
	}
}

// benchDecisions checks that decide succeeds once, then times b.N calls.
func benchDecisions(b *testing.B, decide func() error) {
	if err := decide(); err != nil {
		b.Fatalf("Schedule: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := decide(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScheduleLatency reports the median and 99th percentile of single
// decisions; run it with -benchtime=200x.
func BenchmarkScheduleLatency(b *testing.B) {
	for _, n := range benchSizes {
		snapshot := fleet(n)
		for _, bp := range benchPlacements() {
			binding := benchBinding(bp.p)
			b.Run(fmt.Sprintf("clusters=%d/%s", n, bp.name), func(b *testing.B) {
				samples := make([]time.Duration, 0, b.N)
				for i := 0; i < b.N; i++ {
					start := time.Now()
					if _, err := scheduler.Schedule(snapshot, binding); err != nil {
						b.Fatal(err)
					}
					samples = append(samples, time.Since(start))
				}
				sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
				b.ReportMetric(float64(percentile(samples, 50).Microseconds()), "p50-µs")
				b.ReportMetric(float64(percentile(samples, 99).Microseconds()), "p99-µs")
			})
		}
	}
}

func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}
