// Package shared is the layer every reconciler of the continuous driver
// stands on: Options, the binding store (ResourceBinding and
// ClusterResourceBinding as one), events and metrics helpers, the trust
// checks (ValidateResourceBinding, ValidateWork and the namespace Work
// checks), member connections (members, claims), the
// template kinds registry (discovery and the CRD watch that refreshes
// it), Work naming and rendering (ExecutionNamespace, WorkName,
// PlanWorks), suspension and graceful eviction
// decisions, state preservation, the namespace sync's rules and the
// scheme.
//
// It must not import any reconciler package (controlplane/controller/*)
// nor provider/. What only one reconciler needs belongs in that
// reconciler's package.
package shared
