// Package controller is flotilla's continuous driver: controller-runtime
// reconcilers over flotilla's CRDs (controlplane/apis) stored in a real
// kube-apiserver, the host. One reconciler per concern, each level-triggered
// and idempotent:
//
//   - cluster status: probes every Cluster, writes Karmada's status with a
//     Ready condition that flips only after the success/failure threshold,
//     and keeps the not-ready/unreachable taints in spec.taints
//     (NoSchedule at once, NoExecute after Options.NoExecuteAfter);
//   - detector: one per template kind; claims templates with
//     controlplane/policy and keeps one ResourceBinding per claimed template;
//   - scheduler: ResourceBinding → controlplane/scheduler → spec.clusters;
//   - execution: renders the binding with controlplane/render, applies it to
//     members with controlplane/execution, prunes clusters it left, and
//     aggregates health into the binding's and the template's status.
//
// Decisions are made by the pure engine packages; this package only reads,
// calls and writes. It must not import provider/.
package controller
