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
//   - scheduler: ResourceBinding → controlplane/scheduler → spec.clusters.
//     It plays Karmada's taint manager too: a cluster left because of an
//     untolerated NoExecute taint gets a GracefulEvictionTask in the same
//     write. spec.rescheduleTriggeredAt asks for one schedule from scratch;
//   - execution: renders the binding with controlplane/render, applies it to
//     members with controlplane/execution, prunes clusters it left, and
//     aggregates health into the binding's and the template's status. A
//     cluster under graceful eviction keeps its copy until every scheduled
//     cluster reports Healthy or the grace period ends; then the task is
//     dropped and the next pass prunes the copy.
//
// Decisions are made by the pure engine packages; this package only reads,
// calls and writes. It must not import provider/.
package controller
