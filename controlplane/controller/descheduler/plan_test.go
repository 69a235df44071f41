package descheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

func TestPlan(t *testing.T) {
	tc := func(pairs ...any) []api.TargetCluster {
		var out []api.TargetCluster
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, api.TargetCluster{Name: pairs[i].(string), Replicas: int32(pairs[i+1].(int))})
		}
		return out
	}
	type seen = map[string]estimator.WorkloadReplicas
	cases := []struct {
		name     string
		clusters []api.TargetCluster
		seen     seen
		want     []api.TargetCluster
		moves    string
	}{
		{"nothing unschedulable", tc("a", 3, "b", 2), seen{"a": {Bound: 3}}, nil, "[]"},
		{"every replica of a cluster stuck: it leaves", tc("a", 3, "b", 2), seen{"a": {Unschedulable: 3}},
			tc("b", 2), "[{a 3 0}]"},
		{"some stuck: the share shrinks by them", tc("a", 5, "b", 2), seen{"a": {Bound: 2, Unschedulable: 3}},
			tc("a", 2, "b", 2), "[{a 5 2}]"},
		{"never below the pods holding a node", tc("a", 5), seen{"a": {Bound: 4, Unschedulable: 3}},
			tc("a", 4), "[{a 5 4}]"},
		{"the floor never exceeds the share", tc("a", 5), seen{"a": {Bound: 9, Unschedulable: 3}}, nil, "[]"},
		{"more stuck than the share (a surge): left alone", tc("a", 2), seen{"a": {Unschedulable: 3}}, nil, "[]"},
		{"two clusters", tc("a", 3, "b", 4, "c", 1), seen{"a": {Unschedulable: 1, Bound: 2}, "c": {Unschedulable: 1}},
			tc("a", 2, "b", 4), "[{a 3 2} {c 1 0}]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]api.TargetCluster(nil), c.clusters...)
			got, moves := plan(in, c.seen)
			if fmt.Sprint(got) != fmt.Sprint(c.want) || fmt.Sprint(moves) != c.moves {
				t.Fatalf("got %v %v, want %v %s", got, moves, c.want, c.moves)
			}
			if fmt.Sprint(in) != fmt.Sprint(c.clusters) {
				t.Fatalf("input modified: %v", in)
			}
		})
	}
}

func TestNote(t *testing.T) {
	got := note([]move{{"a", 3, 0}, {"b", 5, 4}}, 5*time.Minute)
	want := "descheduled 3 of 3 replica(s) from cluster a, 1 of 5 replica(s) from cluster b (4 in all): their pods were unschedulable there for more than 5m0s; the scheduler places them where they fit"
	if got != want {
		t.Fatalf("got %q", got)
	}
}
