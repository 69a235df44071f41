// Package status waits for a resource template's objects in the member
// clusters to become healthy: it polls the live objects, judges and
// aggregates them with package health, reports progress, and on timeout
// names every member that is not ready and why.
//
// It owns the wait loop and the default reader over dynamic clients.
// Interpreting objects belongs to package health; connecting to members
// (clients, credentials, health probes) belongs to the caller, which hands
// Reader a function that returns a member's client.
//
// It is one of the engine's I/O packages: it may import client-go and
// internal/ packages, and it must never import provider/.
package status
