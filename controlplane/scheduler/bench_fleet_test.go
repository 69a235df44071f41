package scheduler_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler/benchfleet"
)

// issueFleet builds the fleet of issue 23 (benchfleet.Clusters): five
// regions with one zone each, two providers, a "tier=gold" label on 90% of
// clusters, a NoSchedule taint on every 20th cluster, the Deployment API
// missing on every 25th, and varied allocatable and allocated CPU, memory
// and pods.
func issueFleet(n int) []*api.Cluster { return benchfleet.Clusters(n) }

// issuePlacements are the five strategies of issue 23 (benchfleet.Cases),
// each selecting the clusters by the "tier=gold" label.
func issuePlacements() []struct {
	name string
	p    api.Placement
} {
	var out []struct {
		name string
		p    api.Placement
	}
	for _, c := range benchfleet.Cases() {
		out = append(out, struct {
			name string
			p    api.Placement
		}{c.Name, *c.Binding.Spec.Placement})
	}
	return out
}

// BenchmarkScheduleIssueFleet measures one decision per strategy on the
// fleet of issue 23 (a Deployment of 1,000 replicas requesting 250m CPU and
// 512Mi) at 100, 1,000 and 5,000 clusters.
func BenchmarkScheduleIssueFleet(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		snapshot := issueFleet(n)
		for _, bp := range issuePlacements() {
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

// BenchmarkSnapshotIssueFleet is BenchmarkScheduleIssueFleet through a
// Snapshot built once, as a caller scheduling many templates over one fleet
// uses it; building the Snapshot is measured separately.
func BenchmarkSnapshotIssueFleet(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		clusters := issueFleet(n)
		b.Run(fmt.Sprintf("clusters=%d/NewSnapshot", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				scheduler.NewSnapshot(clusters)
			}
		})
		snapshot := scheduler.NewSnapshot(clusters)
		for _, bp := range issuePlacements() {
			binding := benchBinding(bp.p)
			b.Run(fmt.Sprintf("clusters=%d/%s", n, bp.name), func(b *testing.B) {
				benchDecisions(b, func() error {
					_, err := snapshot.Schedule(binding)
					return err
				})
			})
		}
	}
}

// BenchmarkIssueFleetLatency is the issue 23 shape in `make bench`: p50 and
// p99 of one decision per strategy at 10, 100, 1,000 and 5,000 clusters.
// "shared" schedules over one Snapshot, as the control plane does for every
// binding while the fleet is unchanged (the affinity of a policy is
// evaluated by its first template only); "fresh" builds the Snapshot for
// every decision, as a single Terraform plan does.
func BenchmarkIssueFleetLatency(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 5000} {
		clusters := issueFleet(n)
		shared := scheduler.NewSnapshot(clusters)
		for _, bp := range issuePlacements() {
			binding := benchBinding(bp.p)
			modes := []struct {
				name   string
				decide func() error
			}{
				{"shared", func() error { _, err := shared.Schedule(binding); return err }},
				{"fresh", func() error { _, err := scheduler.NewSnapshot(clusters).Schedule(binding); return err }},
			}
			for _, m := range modes {
				b.Run(fmt.Sprintf("clusters=%d/%s/%s", n, bp.name, m.name), func(b *testing.B) { latencies(b, m.decide) })
			}
		}
	}
}

// latencies runs decide b.N times and reports the p50 and p99 of one run.
// "Nothing fits" is a decision too: with 10 clusters the spread constraints
// of the issue's shape (3 to 12 clusters over 2 to 3 regions) cannot always
// be met, and answering so is timed like a placement.
func latencies(b *testing.B, decide func() error) {
	b.Helper()
	b.ReportAllocs()
	samples := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var fit *scheduler.FitError
		if err := decide(); err != nil && !errors.As(err, &fit) {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(percentile(samples, 50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(samples, 99).Microseconds()), "p99-µs")
}

// roomyFleet is issueFleet with a hundred times the allocatable pods, CPU
// and memory, so that even 100,000 replicas fit into the twelve clusters
// the spread constraints allow: the replica count then changes the
// division, not whether it succeeds.
func roomyFleet(n int) []*api.Cluster {
	clusters := issueFleet(n)
	for _, c := range clusters {
		alloc := c.Status.ResourceSummary.Allocatable
		for name, q := range alloc {
			alloc[name] = *resource.NewMilliQuantity(q.MilliValue()*100, q.Format)
		}
	}
	return clusters
}

// issueReplicaCounts are the replica counts allocations must not depend on.
var issueReplicaCounts = []int32{10, 1000, 100000}

// BenchmarkIssueFleetReplicas is one decision per strategy over a shared
// Snapshot of 1,000 roomy clusters at 10, 1,000 and 100,000 replicas: with
// -benchmem it shows that what a decision allocates does not grow with the
// replica count.
func BenchmarkIssueFleetReplicas(b *testing.B) {
	snapshot := scheduler.NewSnapshot(roomyFleet(1000))
	for _, bp := range issuePlacements() {
		for _, replicas := range issueReplicaCounts {
			binding := benchBinding(bp.p)
			binding.Replicas = replicas
			b.Run(fmt.Sprintf("%s/replicas=%d", bp.name, replicas), func(b *testing.B) {
				benchDecisions(b, func() error {
					_, err := snapshot.Schedule(binding)
					return err
				})
			})
		}
	}
}
