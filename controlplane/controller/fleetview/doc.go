// Package fleetview wires the cluster proxy (controlplane/fleetview) into
// the control plane: it resolves a Cluster to the address and impersonator
// identity the proxy reaches it with, and reconciles in every member the
// RBAC that lets that identity impersonate exactly the host subjects
// allowed clusters/proxy on it (as Karmada's unified-auth controller does).
// It imports no other reconciler package.
package fleetview
