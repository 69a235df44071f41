package apitest

import "github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"

// SuspendAll sets suspension.dispatching: dispatch to every cluster is held.
func (w *PropagationPolicyWrapper) SuspendAll() *PropagationPolicyWrapper {
	t := true
	w.spec.Suspension = &api.Suspension{Dispatching: &t}
	return w
}

// SuspendOn sets suspension.dispatchingOnClusters to the named clusters.
func (w *PropagationPolicyWrapper) SuspendOn(clusterNames ...string) *PropagationPolicyWrapper {
	w.spec.Suspension = &api.Suspension{DispatchingOnClusters: &api.SuspendClusters{ClusterNames: clusterNames}}
	return w
}

// SchedulerName sets the scheduler the policy's templates are left to.
func (w *PropagationPolicyWrapper) SchedulerName(name string) *PropagationPolicyWrapper {
	w.spec.SchedulerName = name
	return w
}

// DependentOverrides sets the override policies propagation waits for.
func (w *PropagationPolicyWrapper) DependentOverrides(names ...string) *PropagationPolicyWrapper {
	w.spec.DependentOverrides = names
	return w
}

// SchedulePriority sets a KubePriorityClass schedule priority.
func (w *PropagationPolicyWrapper) SchedulePriority(priorityClassName string) *PropagationPolicyWrapper {
	w.spec.SchedulePriority = &api.SchedulePriority{PriorityClassSource: api.KubePriorityClass, PriorityClassName: priorityClassName}
	return w
}
