package shared

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/metrics"
)

// flotilla_resource_bindings (controlplane/metrics), counted from the
// binding store. A metric one reconciler records lives in that
// reconciler's package (observe.go there).

// The states flotilla_resource_bindings counts.
const (
	BindingStateUnscheduled   = "Unscheduled"
	BindingStateUnschedulable = "Unschedulable"
	BindingStateScheduled     = "Scheduled"
	BindingStateFullyApplied  = "FullyApplied"
)

// bindingState is the state flotilla_resource_bindings counts a binding in.
func bindingState(rb *workv1.ResourceBinding) string {
	sched := apimeta.FindStatusCondition(rb.Status.Conditions, api.ConditionScheduled)
	switch {
	case sched == nil:
		return BindingStateUnscheduled
	case sched.Status != metav1.ConditionTrue:
		return BindingStateUnschedulable
	case apimeta.IsStatusConditionTrue(rb.Status.Conditions, api.ConditionFullyApplied):
		return BindingStateFullyApplied
	}
	return BindingStateScheduled
}

// BindingCounter counts the bindings of both kinds per state from the
// manager's cache, once elected leader (a standby's cache holds no
// bindings and its count would be wrong).
func BindingCounter(c client.Reader, elected <-chan struct{}) metrics.BindingCounter {
	return func(ctx context.Context) (map[string]int, bool, error) {
		select {
		case <-elected:
		default:
			return nil, false, nil
		}
		all, err := ListAllBindings(ctx, c)
		if err != nil {
			return nil, false, err
		}
		counts := map[string]int{BindingStateUnscheduled: 0, BindingStateUnschedulable: 0, BindingStateScheduled: 0, BindingStateFullyApplied: 0}
		for i := range all {
			counts[bindingState(&all[i])]++
		}
		return counts, true, nil
	}
}
