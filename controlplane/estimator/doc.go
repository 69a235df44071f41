// Package estimator is the pure core of flotilla's accurate scheduling: it
// keeps, per member cluster, its nodes and what the pods bound to each
// node request (Nodes, fed incrementally by the member's informers), and
// answers from that how many replicas of a template the member can really
// start, node by node (Nodes.MaxReplicas), and how its nodes grade against
// the Cluster's resource models (AllocatableModelings).
//
// It follows Karmada's scheduler-estimator (pkg/estimator/server) and the
// cluster status controller's resource modeling (pkg/modeling), without the
// gRPC service: the control plane already watches every member. It does no
// I/O and reads no clock; the member package feeds it.
package estimator
