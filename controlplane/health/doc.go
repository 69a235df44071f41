// Package health interprets the live objects flotilla applied to member
// clusters, the way Karmada's default resource interpreter does: whether one
// object is Healthy, Unhealthy or Unknown and why (Interpret), which part of
// its status is worth carrying back (ReflectStatus), and how the per-cluster
// results add up to one health and one status for the resource template
// (Aggregate).
//
// It owns the per-kind health rules, status reflection and aggregation.
// Reading the objects from the members belongs to package status; writing
// an aggregated status anywhere belongs to the drivers.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. The same inputs give the same output, byte for byte.
package health
