// Package namespacesync is Karmada's namespace controller: every host
// namespace shared.SyncsNamespace admits gets a Work in every Cluster's
// execution namespace, labelled namespace.flotilla.io/name and
// permanent-id (its UID), carrying the namespace rendered with the
// ClusterOverridePolicies that select it; the execution controller
// applies it with conflict resolution Abort (shared's namespace Work
// checks), so a namespace the member had before is neither taken over nor
// deleted. A deleted host namespace has its Works deleted.
//
// It imports controlplane/controller/shared and no other controller
// package.
package namespacesync
