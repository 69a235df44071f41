// Package schedule is the continuous scheduler: ResourceBinding →
// controlplane/scheduler → spec.clusters. It plays Karmada's taint manager
// too: a cluster left because of an untolerated NoExecute taint gets a
// GracefulEvictionTask in the same write. spec.rescheduleTriggeredAt asks
// for one schedule from scratch. Bindings wait in a priority queue, and a
// Cluster change requeues only the bindings it could move.
//
// It imports controlplane/controller/shared and no other controller
// package.
package schedule
