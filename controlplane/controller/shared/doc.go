// Package shared is the layer every reconciler of the continuous driver
// stands on: Options, the binding store (ResourceBinding and
// ClusterResourceBinding as one), events and metrics helpers, the trust
// checks (ValidateResourceBinding, ValidateWork and the namespace Work
// checks, which ask the detector's kinds registry through ServedKinds),
// member connections (members, claims), Work naming and merging
// (ExecutionNamespace, WorkName, MergeWork, WorkSuspended), graceful
// eviction decisions (the taint manager's, in schedule, and the binding
// controller's), state preservation, the namespace sync's rules and the
// scheme.
//
// It must not import any reconciler package (controlplane/controller/*)
// nor provider/. What only one reconciler needs belongs in that
// reconciler's package.
package shared
