package shared

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// TestMergeSuspension follows Karmada's MergePolicySuspension.
func TestMergeSuspension(t *testing.T) {
	all := &api.Suspension{Dispatching: ptr.To(true)}
	cases := map[string]struct {
		have *api.BindingSuspension
		from *api.Suspension
		want *api.BindingSuspension
	}{
		"none":                      {},
		"policy suspends":           {from: all, want: &api.BindingSuspension{Suspension: *all}},
		"lifted clears the binding": {have: &api.BindingSuspension{Suspension: *all}},
		"lifted keeps scheduling":   {have: &api.BindingSuspension{Suspension: *all, Scheduling: ptr.To(true)}, want: &api.BindingSuspension{Scheduling: ptr.To(true)}},
		"policy replaces, keeps scheduling": {
			have: &api.BindingSuspension{Suspension: *all, Scheduling: ptr.To(true)},
			from: &api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"b"}}},
			want: &api.BindingSuspension{Suspension: api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"b"}}}, Scheduling: ptr.To(true)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MergeSuspension(tc.have, tc.from)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDispatchingCondition: present and False, naming the held-back
// scheduled clusters, while any is held back; removed once none is.
func TestDispatchingCondition(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	on := func(names ...string) *api.BindingSuspension {
		return &api.BindingSuspension{Suspension: api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: names}}}
	}
	var conds []metav1.Condition
	DispatchingCondition(&conds, on("b", "z"), []string{"a", "b"}, 3, now)
	c := apimeta.FindStatusCondition(conds, api.ConditionDispatching)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != api.ReasonSuspendDispatching || c.ObservedGeneration != 3 {
		t.Fatalf("condition %+v", c)
	}
	if want := "suspends dispatching to cluster b:"; !strings.Contains(c.Message, want) {
		t.Errorf("message %q does not say %q", c.Message, want)
	}
	DispatchingCondition(&conds, on("z"), []string{"a", "b"}, 4, now)
	if c := apimeta.FindStatusCondition(conds, api.ConditionDispatching); c != nil {
		t.Errorf("no scheduled cluster is held back, condition stays: %+v", c)
	}
}
