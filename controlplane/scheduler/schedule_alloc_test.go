package scheduler_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

// TestScheduleAllocationsPerDecision checks that a decision over a shared
// Snapshot allocates a bounded number of times, whatever the replica count
// and far fewer times than there are clusters: the working slices come
// from a pool and clusters rejected for the same reason share its string.
// What is left is the Result itself (its clusters and its Reasons map,
// whose size follows the number of clusters left out) and a few small
// slices per stage.
func TestScheduleAllocationsPerDecision(t *testing.T) {
	const clusters = 1000
	snapshot := scheduler.NewSnapshot(roomyFleet(clusters))
	for _, bp := range issuePlacements() {
		var counts []float64
		for _, replicas := range issueReplicaCounts {
			binding := benchBinding(bp.p)
			binding.Replicas = replicas
			if _, err := snapshot.Schedule(binding); err != nil {
				t.Fatalf("%s, %d replicas: %v", bp.name, replicas, err)
			}
			counts = append(counts, testing.AllocsPerRun(20, func() {
				_, _ = snapshot.Schedule(binding)
			}))
		}
		t.Logf("%s: allocations at %v replicas: %v", bp.name, issueReplicaCounts, counts)
		lo, hi := counts[0], counts[0]
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		// The Reasons map grows by a table or two when more clusters are
		// left out; nothing else may depend on the replica count.
		if hi-lo > 4 {
			t.Errorf("%s: allocations %v at %v replicas depend on the replica count", bp.name, counts, issueReplicaCounts)
		}
		if hi > clusters/10 {
			t.Errorf("%s: %v allocations per decision over %d clusters, want at most %d", bp.name, hi, clusters, clusters/10)
		}
	}
}

// TestSnapshotConcurrentSchedules schedules every strategy from several
// goroutines at once over one Snapshot and checks each result against the
// same decision made alone by Schedule: the pooled working slices are
// never shared by two decisions. Run it with -race.
func TestSnapshotConcurrentSchedules(t *testing.T) {
	clusters := issueFleet(300)
	snapshot := scheduler.NewSnapshot(clusters)
	type want struct {
		binding scheduler.Binding
		res     scheduler.Result
		err     string
	}
	var wants []want
	for _, bp := range issuePlacements() {
		for _, replicas := range []int32{0, 7, 1000} {
			b := benchBinding(bp.p)
			b.Replicas = replicas
			res, err := scheduler.Schedule(clusters, b)
			wants = append(wants, want{b, res, fmt.Sprint(err)})
		}
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for round := range 4 {
				for k := range wants {
					w := wants[(k+g+round)%len(wants)]
					res, err := snapshot.Schedule(w.binding)
					if fmt.Sprint(err) != w.err {
						t.Errorf("goroutine %d: error %v, want %s", g, err, w.err)
						return
					}
					if diff := cmp.Diff(viewOf(w.res), viewOf(res)); diff != "" {
						t.Errorf("goroutine %d: result differs from a lone decision (-want +got):\n%s", g, diff)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
