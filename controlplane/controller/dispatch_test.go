package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

// TestSchedulerQueueOrdersByPriority feeds binding events through the
// scheduler's handler into controller-runtime's priority queue and checks
// the scheduler is handed them highest priority first, FIFO within a
// priority, as Karmada's scheduling queue orders them.
func TestSchedulerQueueOrdersByPriority(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("scheduler-test")
	t.Cleanup(q.ShutDown)
	binding := func(name string, priority *int32) *workv1.ResourceBinding {
		rb := &workv1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		if priority != nil {
			rb.Spec.SchedulePriority = &api.BindingSchedulePriority{Priority: *priority}
		}
		return rb
	}
	h := bindingsByPriority()
	for _, rb := range []*workv1.ResourceBinding{
		binding("low", ptr.To[int32](-10)), binding("none-1", nil), binding("high", ptr.To[int32](1000)),
		binding("none-2", nil), binding("mid", ptr.To[int32](5)),
	} {
		h.Create(context.Background(), event.CreateEvent{Object: rb}, q)
	}
	var got []string
	for range 5 {
		req, _, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		got = append(got, req.Name)
		q.Done(req)
	}
	if diff := cmp.Diff([]string{"high", "mid", "none-1", "none-2", "low"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

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
			if diff := cmp.Diff(tc.want, mergeSuspension(tc.have, tc.from)); diff != "" {
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
	dispatchingCondition(&conds, on("b", "z"), []string{"a", "b"}, 3, now)
	c := apimeta.FindStatusCondition(conds, api.ConditionDispatching)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != api.ReasonSuspendDispatching || c.ObservedGeneration != 3 {
		t.Fatalf("condition %+v", c)
	}
	if want := "suspends dispatching to cluster b:"; !strings.Contains(c.Message, want) {
		t.Errorf("message %q does not say %q", c.Message, want)
	}
	dispatchingCondition(&conds, on("z"), []string{"a", "b"}, 4, now)
	if c := apimeta.FindStatusCondition(conds, api.ConditionDispatching); c != nil {
		t.Errorf("no scheduled cluster is held back, condition stays: %+v", c)
	}
}
