// Package e2e holds the integration tests and benchmarks that span the
// whole control plane rather than one reconciler: a template propagated,
// moved and failed over end to end, restarts of the host and of the
// control plane, cold-start and restart write counts, Events and metrics
// across reconcilers, cluster-scoped templates, the scheduler's workers
// stopping, and the process benchmarks (scale, failover, restart, write
// floor, Work throughput) that run the built binary.
//
// A reconciler's own integration tests live beside it, in its package's
// external test package. Both start real apiservers through
// controller/controllertest. It holds no production code and nothing
// imports it.
//
// Its tests that start their own fleet run in parallel (see
// controllertest); the Events tests, which read flotilla's failover and
// eviction counters, and TestSchedulerWorkersStop, which counts
// goroutines, stay serial.
package e2e
