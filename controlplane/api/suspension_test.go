package api_test

import (
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// TestDispatchSuspended follows Karmada's shouldSuspendDispatching
// (pkg/controllers/binding/common.go).
func TestDispatchSuspended(t *testing.T) {
	spec := func(w *apitest.PropagationPolicyWrapper) *api.Suspension { s := w.Spec(); return s.Suspension }
	pp := func() *apitest.PropagationPolicyWrapper { return apitest.MakePropagationPolicy("p", "ns") }
	f := false
	cases := map[string]struct {
		s       *api.Suspension
		cluster string
		want    bool
	}{
		"no suspension":                    {s: nil, cluster: "east"},
		"dispatching false":                {s: &api.Suspension{Dispatching: &f}, cluster: "east"},
		"dispatching true holds every one": {s: spec(pp().SuspendAll()), cluster: "east", want: true},
		"named cluster is held":            {s: spec(pp().SuspendOn("west", "east")), cluster: "east", want: true},
		"unnamed cluster is dispatched":    {s: spec(pp().SuspendOn("west")), cluster: "east"},
		"dispatching false, names hold":    {s: &api.Suspension{Dispatching: &f, DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"east"}}}, cluster: "east", want: true},
		"empty cluster list holds nothing": {s: &api.Suspension{DispatchingOnClusters: &api.SuspendClusters{}}, cluster: "east"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := api.DispatchSuspended(tc.s, tc.cluster); got != tc.want {
				t.Errorf("DispatchSuspended(%s) = %v, want %v", tc.cluster, got, tc.want)
			}
		})
	}
}

// TestOtherScheduler follows Karmada's schedulerNameFilter: the empty name
// is the default scheduler.
func TestOtherScheduler(t *testing.T) {
	for name, want := range map[string]bool{"": false, api.DefaultSchedulerName: false, "my-scheduler": true} {
		if got := api.OtherScheduler(name); got != want {
			t.Errorf("OtherScheduler(%q) = %v, want %v", name, got, want)
		}
	}
}
