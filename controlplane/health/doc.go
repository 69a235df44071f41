// Package health judges a resource template across its member clusters:
// each member's ClusterStatus (Observe), whether the template is Healthy,
// Unhealthy or Unknown overall and which members hold it back (Aggregate,
// NotHealthy, Summary), with its aggregated status; and a member as a
// rollout gate judges it, its rollout also complete (Gated, Reported).
//
// The per-kind rules (one object's health, the status reflected from it,
// how statuses add up) belong to package interpret, which it asks. Reading
// the objects from the members belongs to package status; writing an
// aggregated status anywhere belongs to the drivers.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. The same inputs give the same output, byte for byte.
package health
