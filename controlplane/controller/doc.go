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
//   - dependencies distributor (Karmada's): for a binding with
//     propagateDeps, each ConfigMap, Secret, ServiceAccount or PVC its
//     template refers to (controlplane/interpret.GetDependencies) and the host
//     holds gets an attached binding <name>-<kind>, labelled
//     resourcebinding.flotilla.io/dependencies-distributor, whose
//     requiredBy lists the workload bindings (with their clusters and the
//     clusters they are gracefully evicted from) and whose clusters are
//     their union. It has no placement, so the scheduler leaves it alone;
//     a workload that stops needing it is removed from requiredBy, and an
//     empty requiredBy deletes it. A dependency claimed by a policy of its
//     own keeps its own binding and is never attached;
//   - scheduler: ResourceBinding → controlplane/scheduler → spec.clusters.
//     It plays Karmada's taint manager too: a cluster left because of an
//     untolerated NoExecute taint gets a GracefulEvictionTask in the same
//     write. spec.rescheduleTriggeredAt asks for one schedule from scratch;
//   - binding: renders the binding (hoststore.RenderBinding over
//     plan.RenderBinding, the synchronous driver's render step, override
//     policies included) into one Work per scheduled cluster, in the
//     cluster's execution namespace flotilla-es-<cluster> (created on
//     demand), named <template>-<hash> and tied to the binding by the
//     resourcebinding.flotilla.io/permanent-id label (the binding's UID)
//     and namespace/name annotations. It deletes the Works of clusters the
//     binding left. The Works are written before anything reaches a
//     member, so they are the durable record of where the template is.
//     A cluster under graceful eviction keeps its Work, with
//     spec.suspendDispatching set, until every scheduled cluster reports
//     Healthy or the grace period ends; then the task is dropped and the
//     next pass deletes the Work. A deleted binding deletes its Works and
//     keeps its finalizer until they are gone;
//   - execution: one Work at a time, applies its manifests to the member
//     with controlplane/execution (server-side apply, ownership labels,
//     conflict refusal) and sets the Work's Applied condition; a deleted
//     Work has its objects removed (or released) before its finalizer
//     goes. An unready member is retried after Options.Resync without
//     holding up other Works; the Work of a Cluster that no longer exists
//     is deleted from the host;
//   - work status: reads each applied Work's objects back from the member
//     into status.manifestStatuses (controlplane/health's reflected status
//     and health) and the Available condition, every Options.Resync. An
//     object found missing brings the execution controller back at once;
//   - binding status aggregation (in the binding controller): one
//     aggregatedStatus item per cluster (applied, health, status) and the
//     FullyApplied condition, from the Works; the aggregated status goes
//     into the template's .status, as Karmada does for Deployments.
//   - application failover: a scheduled cluster whose aggregated health
//     stays Unhealthy longer than the policy's
//     failover.application.decisionConditions.tolerationSeconds is evicted
//     from the binding with a GracefulEvictionTask (reason
//     ApplicationFailure, the policy's purge mode), and the scheduler
//     places the replicas elsewhere. The unhealthy-since times live in the
//     binding annotation failover.flotilla.io/unhealthy-since, so a restart
//     or a new leader does not reset them;
//   - namespace sync (Karmada's namespace controller): every host
//     namespace SyncsNamespace admits gets a Work in every Cluster's
//     execution namespace, labelled namespace.flotilla.io/name and
//     permanent-id (its UID), carrying the namespace rendered with the
//     ClusterOverridePolicies that select it; the execution controller
//     applies it with conflict resolution Abort (verifyNamespaceWork), so
//     a namespace the member had before is neither taken over nor
//     deleted. A deleted host namespace has its Works deleted;
//   - orphan collector: deletes a ResourceBinding whose template is gone,
//     which covers a template deleted while no control plane ran;
//   - policy validation: a policy that fails the webhook's validation
//     (stored while no webhook ran) gets a Warning Event PolicyInvalid
//     naming each field. The readers above get valid policies only
//     (hoststore), and hold what an invalid one claimed or may override.
//
// Decisions are made by the pure engine packages; this package only reads,
// calls and writes. It must not import provider/.
package controller
