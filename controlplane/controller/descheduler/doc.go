// Package descheduler is flotilla's descheduler, after Karmada's
// karmada-descheduler: every Options.DeschedulingInterval it looks at the
// bindings whose placement divides replicas by what fits (dynamic weights
// or Aggregated; never Duplicated or static weights, see
// scheduler.DividesByAvailability) and whose template is a Deployment or a
// StatefulSet, counts in each of their members the pods kube-scheduler has
// found unschedulable for longer than Options.UnschedulableThreshold, and
// lowers that member's replicas in the binding by as many, never below the
// pods that hold a node there. The scheduler then sees fewer replicas
// placed than wanted and places the rest where they fit, as a scale-up.
//
// The pods are counted from the member informers the control plane
// already keeps (member.Client.Pods, estimator.Pods), by namespace and
// controller UID: a workload's pods are those its own object in the
// member (the one flotilla applied, by its ownership labels) controls, or
// that its ReplicaSets control. Labels and names, which a tenant chooses,
// decide nothing. The decision itself is a pure function (plan.go).
//
// It imports controlplane/controller/shared and no other controller
// package.
package descheduler
