// Package status waits for a resource template's objects in the member
// clusters to become healthy: it polls the live objects, judges and
// aggregates them with package health, reports progress, and on timeout
// names every member that is not ready and why.
//
// It owns the wait loop. Reading members belongs to package execution
// (ObserveLive, the one path that reads objects back from members, for
// refresh and for waiting alike), interpreting objects to package health,
// and connecting to members (clients, credentials, health probes) to the
// caller, which hands Wait its executor's ObserveLive.
//
// It is one of the engine's I/O packages: it may import client-go and
// internal/ packages, and it must never import provider/.
package status
