// Package autoscale is the pure replica calculator of FederatedHPA: the
// Kubernetes HorizontalPodAutoscaler algorithm over the pods of every
// member a target is placed on (tolerance, pods with missing metrics,
// unready and initialising pods, scale-up and scale-down stabilization
// windows, scaling policies), written from the documented algorithm and
// Karmada's semantics.
//
// It is part of the pure core: no client library, no I/O and no clock
// (the caller passes now); controlplane/controller/federatedhpa feeds it
// the members' pod metrics.
package autoscale
