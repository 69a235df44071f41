// Package controller is flotilla's continuous driver: controller-runtime
// reconcilers over flotilla's CRDs (controlplane/apis) stored in a real
// kube-apiserver, the host. One reconciler per concern, each level-triggered
// and idempotent, each in a package of its own named by what it reconciles
// (as Karmada's pkg/controllers/<name>):
//
//   - clusterstatus: the Cluster's status, Ready condition and taints;
//   - detector: templates → ResourceBindings, one detector per template
//     kind, the template kinds registry that starts and stops them, and
//     the orphan collector;
//   - dependencies: the dependencies distributor (propagateDeps);
//   - schedule: ResourceBinding → spec.clusters, and the taint manager;
//   - binding: ResourceBinding → Works, status aggregation, staged
//     rollouts;
//   - failover: application failover;
//   - policyvalidation: a Warning Event on each policy that fails the
//     webhook's validation (stored while no webhook ran);
//   - customization: the Ready condition of each resource interpreter
//     customization, from the controllers' one interpreter cache;
//   - namespacesync: host namespaces → namespace Works in every cluster;
//   - work: execution (Works → members) and work status, in the control
//     plane and in a pull-mode agent;
//   - agent: the pull-mode agent, which reuses work in its member.
//
// They stand on shared, the layer every reconciler needs (options, the
// binding store, events, trust checks and Work verification, member
// connections, Work naming and merging, eviction decisions, metrics),
// which imports none of them. No reconciler package imports another
// (depguard keeps it so), except agent, which runs work's controllers.
// Setup, here, is the one place that wires them.
//
// Decisions are made by the pure engine packages; these packages only
// read, call and write. They must not import provider/.
package controller
