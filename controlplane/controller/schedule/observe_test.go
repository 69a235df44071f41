package schedule

import (
	"errors"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

func TestScheduleOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, metrics.ResultScheduled},
		{&scheduler.FitError{}, metrics.ResultUnschedulable},
		{errors.New("boom"), metrics.ResultError},
	} {
		if got := scheduleOutcome(tc.err); got != tc.want {
			t.Errorf("scheduleOutcome(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestPlacementNote(t *testing.T) {
	for _, tc := range []struct {
		clusters []api.TargetCluster
		want     string
	}{
		{nil, "scheduled to no cluster"},
		{[]api.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b"}}, "scheduled to a (2 replicas), b"},
	} {
		if got := placementNote(tc.clusters); got != tc.want {
			t.Errorf("placementNote(%v) = %q, want %q", tc.clusters, got, tc.want)
		}
	}
}
