// Package failover is the application failover controller: a scheduled
// cluster whose aggregated health stays Unhealthy longer than the policy's
// failover.application.decisionConditions.tolerationSeconds is evicted
// from the binding with a GracefulEvictionTask (reason ApplicationFailure,
// the policy's purge mode), and the scheduler places the replicas
// elsewhere. The unhealthy-since times live in the binding annotation
// failover.flotilla.io/unhealthy-since, so a restart or a new leader does
// not reset them. The decision itself is a pure function (failover.go);
// the eviction tasks and state preservation it writes are shared with the
// scheduler's taint manager.
//
// It imports controlplane/controller/shared and no other controller
// package.
package failover
