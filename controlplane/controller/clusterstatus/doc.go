// Package clusterstatus is the cluster status controller: it probes every
// Cluster, writes Karmada's status with a Ready condition that flips only
// after the success/failure threshold, and keeps the not-ready/unreachable
// taints in spec.taints (NoSchedule at once, NoExecute after
// Options.NoExecuteAfter). A Pull cluster is not probed: its liveness is
// the Lease its agent renews in shared.ClusterLeaseNamespace.
//
// It imports controlplane/controller/shared and no other controller
// package.
package clusterstatus
