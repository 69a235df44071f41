package api

import "slices"

// DispatchSuspended reports whether a policy's suspension stops dispatch to
// cluster, as Karmada's binding controller decides each Work's
// spec.suspendDispatching (shouldSuspendDispatching): dispatching: true
// holds every cluster back, otherwise dispatchingOnClusters names the ones
// held back. A suspended cluster is still scheduled and still gets its Work
// (or, in a plan, its rendered object); only the member is left untouched.
func DispatchSuspended(s *Suspension, cluster string) bool {
	if s == nil {
		return false
	}
	if s.Dispatching != nil && *s.Dispatching {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}

// OtherScheduler reports whether a policy's schedulerName names a scheduler
// other than flotilla's own. Karmada's scheduler skips such bindings
// (schedulerNameFilter); the empty name means the default one.
func OtherScheduler(schedulerName string) bool {
	return schedulerName != "" && schedulerName != DefaultSchedulerName
}
