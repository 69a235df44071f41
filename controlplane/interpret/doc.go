// Package interpret is flotilla's resource interpreter: everything flotilla
// knows per kind, in one table keyed by group and kind (kinds.go), with one
// file per operation of Karmada's resource interpreter:
//
//   - replicas.go: GetReplicas, a template's replicas and what one replica
//     requests (InterpretReplica);
//   - revise.go: ReviseReplica, a workload's replicas set to a cluster's
//     share;
//   - retain.go: Retain, the fields a member owns left out of what flotilla
//     applies (the retain-replicas label);
//   - reflect.go: ReflectStatus, the part of a member object's status
//     carried back;
//   - aggregate.go, aggregate_kinds.go, aggregate_phase.go: AggregateStatus,
//     the members' statuses added up into the template's;
//   - health.go, health_workload.go, health_service.go: InterpretHealth;
//   - rollout.go: RolloutComplete, `kubectl rollout status` for the
//     rollout gates (not a Karmada operation);
//   - dependencies.go: GetDependencies, what a workload's pods refer to
//     (propagateDeps);
//   - prune.go: Prune, the hub-only fields removed before a manifest goes
//     to a member (Karmada's prune package, which its interpreter calls).
//
// The built-in kinds are Karmada's native ones: Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job, CronJob, Pod, Service, Ingress,
// PersistentVolume, PersistentVolumeClaim, PodDisruptionBudget and
// HorizontalPodAutoscaler (and ServiceAccount, for pruning). To teach
// flotilla a new built-in kind, add its row to the table in kinds.go and its
// rules in the operation files; the consistency test says what a row needs.
//
// Karmada's ResourceInterpreterCustomizations extend the table: New
// returns an Interpreter (custom.go) whose methods (custom_ops.go) run a
// kind's Lua scripts where it has them and the built-in rules otherwise.
// The scripts, compiled once by New, run in a fresh sandboxed gopher-lua
// VM per call (lua_vm.go) with counted step and memory budgets, sized by
// the call's input, and a deadline (lua_budget.go, lua_held.go,
// budget_error.go); the library functions that
// could do unbounded work in one call are replaced by bounded ones
// (lua_strlib.go, lua_format.go), patterns are matched by flotilla's own
// Lua 5.1 matcher (lua_pattern.go), Go values cross as JSON-shaped tables
// (lua_convert.go), and Karmada's kube helper library is lua_kube.go.
//
// Callers (render, plan, override, health, the controllers) ask this
// package; none keeps a table of kinds of its own. Front ends that read
// customizations (preview, the control plane) pass their Interpreter; a
// nil Interpreter and the package functions know the built-in kinds only.
//
// It is part of the pure core: it must not import client-go,
// controller-runtime or anything that does I/O, reads the clock or keeps
// mutable global state. The same inputs give the same output, byte for byte.
// Two exceptions, both about customizations' scripts: a call has a
// wall-clock deadline (WithCallTimeout), the last resort behind the counted
// budgets that decide every ordinary outcome, which stops only a call that
// the machine's load kept from finishing long after the budgets would have
// let it; and an init function sets gopher-lua's array bound, a package
// variable of that library, once (lua_budget.go).
package interpret
