// Package binding is the binding controller. It renders the binding
// (hoststore.RenderBinding over plan.RenderBinding, the synchronous
// driver's render step, override policies included) into one Work per
// scheduled cluster, in the cluster's execution namespace
// flotilla-es-<cluster> (created on demand), named <template>-<hash> and
// tied to the binding by the resourcebinding.flotilla.io/permanent-id
// label (the binding's UID) and namespace/name annotations. It deletes the
// Works of clusters the binding left. The Works are written before
// anything reaches a member, so they are the durable record of where the
// template is. A cluster under graceful eviction keeps its Work, with
// spec.suspendDispatching set, until every scheduled cluster reports
// Healthy or the grace period ends; then the task is dropped and the next
// pass deletes the Work. A deleted binding deletes its Works and keeps its
// finalizer until they are gone. planWorks decides what to write: a Work is
// rewritten only when it differs, and a Namespace's Work changes hands
// with the namespace sync in place (namespace_handover.go) instead of
// being deleted. A policy's dispatch suspension is written into the Works
// (spec.suspendDispatching) and reported in the binding's Dispatching
// condition.
//
// It aggregates the binding's status too: one aggregatedStatus item per
// cluster (applied, health, status) and the FullyApplied condition, from
// the Works; the aggregated status goes into the template's .status, as
// Karmada does for Deployments. And it runs staged rollouts: later stages'
// Works stay at the previous rendering until a gate passes.
//
// It imports controlplane/controller/shared and no other controller
// package.
package binding
