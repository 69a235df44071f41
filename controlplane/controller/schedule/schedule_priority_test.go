package schedule

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
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
