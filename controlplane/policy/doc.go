// Package policy decides which policies apply to a resource template: which
// propagation policy claims it (ClaimPropagation), which override policies
// apply and in what order (MatchOverrides), and whether a cluster matches a
// cluster affinity (ClusterMatches), all as Karmada does.
//
// It is part of the pure core: it imports only controlplane/api and
// apimachinery, never client-go, controller-runtime or anything that does
// I/O or reads the clock. Same input, same output.
package policy
