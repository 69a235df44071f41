//go:build linux

package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// notWorkers are goroutines that outlive a stopped manager without being
// its workers: the host client's pooled connections, which the HTTP
// transport closes on its own idle timeout, and the GVK fix-up of
// controller-runtime's metadata-only informers (newGVKFixupWatcher), whose
// watch.Filter loop stays blocked sending an event the stopped reflector no
// longer reads (apimachinery's filteredWatch has no stop channel; the same
// in v0.35 and v0.37).
var notWorkers = []goleak.Option{
	goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
}

// TestSchedulerWorkersStop stops a control plane whose scheduler has
// several workers while its priority queue is busy (hundreds of bindings
// waiting to be scheduled: each start queues all 600 again), three times,
// and requires the manager to stop without error and every goroutine
// it started to end. controller-runtime v0.23's priority queue deadlocks
// here (kubernetes-sigs/controller-runtime#3538): a worker that leaves on
// shutdown leaves the queue's sender blocked with the queue's lock held, so
// the other workers never finish and the manager gives up after its
// graceful shutdown timeout with their goroutines still running. It is not
// parallel: goleak needs no other test starting goroutines meanwhile.
func TestSchedulerWorkersStop(t *testing.T) {
	const (
		workers   = 8
		clusters  = 20
		templates = 600
		rounds    = 3
	)
	host := testenv.Start(t, testenv.Options{Clusters: 1, NamePrefix: "workers", Mode: testenv.APIServerOnly}).Clusters[0]
	hub := controllertest.SystemHost(t, host)
	ctx := t.Context()
	if err := createScaleFleet(ctx, hub, clusters, templates); err != nil {
		t.Fatal(err)
	}
	start := func() (stop func()) {
		opts := controllertest.Options("test")
		opts.SchedulerWorkers = workers
		// The Clusters have no credentials; the harness's Ready status stays.
		opts.FailureThreshold = 24 * time.Hour
		return controllertest.StartManager(t, host.RESTConfig(),
			ctrl.Options{Client: shared.ClientOptions(), Scheme: controllertest.Scheme(t), GracefulShutdownTimeout: ptr.To(20 * time.Second)},
			controllertest.SetupControlPlane(opts))
	}
	scheduled := 0
	for round := range rounds {
		before := goleak.IgnoreCurrent()
		stop := start()
		// Stop once this round has scheduled some bindings, while others
		// wait in the queue.
		from := scheduled
		testkit.Eventually(t, 2*time.Minute, "bindings scheduled in this round", func() (bool, string) {
			_, n, err := countScheduled(ctx, hub)
			if err != nil {
				return false, err.Error()
			}
			scheduled = n
			return n >= min(from+40, templates), fmt.Sprintf("%d of %d scheduled, %d before round %d", n, templates, from, round)
		})
		began := time.Now()
		stop()
		if t.Failed() {
			t.Fatalf("round %d: the control plane with %d scheduler workers did not stop cleanly", round, workers)
		}
		t.Logf("round %d: stopped in %v with %d of %d bindings scheduled", round, time.Since(began).Round(time.Millisecond), scheduled, templates)
		goleak.VerifyNone(t, append([]goleak.Option{before}, notWorkers...)...)
	}
}
