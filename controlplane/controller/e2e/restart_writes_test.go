//go:build linux

package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/crd"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/controllertest"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestRestartWritesNothing restarts the control plane over a settled fleet
// (a Deployment divided over three members and a ConfigMap on each, every
// Work applied) as a process restart does: the CRDs are installed again and
// a new manager starts. The host must see no write at all but Leases (the
// apiserver's own identity leases; the test's manager runs without leader
// election): the restart's first pass over every binding, Work and
// template, and the periodic passes after it (1 s resync), find everything
// as they would write it. Events are writes too, and none is expected:
// nothing changes, so nothing is worth telling. Issue 20 measured a
// restart rewriting every Deployment's status with zero counts the
// apiserver had dropped, deleting a binding for every unclaimed
// cluster-scoped template (404s) and re-applying every CRD.
func TestRestartWritesNothing(t *testing.T) {
	t.Parallel()
	env := controllertest.StartFleet(t, 3)
	stop := env.StartControlPlane(t)
	propagate(t, env)
	cfg := env.Host.RESTConfig()
	waitHostQuiet(t, cfg, 5*time.Second)

	stop()
	before, err := readHostWrites(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := crd.Install(t.Context(), env.Hub, time.Minute); err != nil {
		t.Fatal(err)
	}
	env.StartControlPlane(t)
	// Several resyncs and probes pass before the count is read.
	time.Sleep(5 * time.Second)
	waitHostQuiet(t, cfg, 3*time.Second)
	after, err := readHostWrites(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := after.since(before)
	writes, leases, events := d.split()
	t.Logf("restart: %v of host writes (%.0f Lease renewals) until quiet", time.Since(start).Round(time.Second), leases)
	if writes != 0 || events != 0 {
		t.Errorf("a restart over a settled fleet wrote %.0f objects and %.0f Events to the host, want none: %v", writes, events, d)
	}
}

// waitHostQuiet waits until the host has seen no write but Leases for quiet.
func waitHostQuiet(t *testing.T, cfg *rest.Config, quiet time.Duration) {
	t.Helper()
	prev, err := readHostWrites(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	last := time.Now()
	testkit.Eventually(t, 2*time.Minute, "the host sees no write", func() (bool, string) {
		now, err := readHostWrites(t.Context(), cfg)
		if err != nil {
			return false, err.Error()
		}
		d := now.since(prev)
		prev = now
		if writes, _, events := d.split(); writes+events > 0 {
			last = time.Now()
			return false, fmt.Sprintf("last writes: %v", d)
		}
		return time.Since(last) >= quiet, "quiet since " + time.Since(last).Round(time.Second).String()
	})
}
