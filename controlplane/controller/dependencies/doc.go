// Package dependencies is Karmada's dependencies distributor: for a
// binding with propagateDeps, each ConfigMap, Secret, ServiceAccount or
// PVC its template refers to (controlplane/interpret.GetDependencies) and
// the host holds gets an attached binding <name>-<kind>, labelled
// resourcebinding.flotilla.io/dependencies-distributor, whose requiredBy
// lists the workload bindings (with their clusters and the clusters they
// are gracefully evicted from) and whose clusters are their union. It has
// no placement, so the scheduler leaves it alone; a workload that stops
// needing it is removed from requiredBy, and an empty requiredBy deletes
// it. A dependency claimed by a policy of its own keeps its own binding
// and is never attached.
//
// It imports controlplane/controller/shared and no other controller
// package.
package dependencies
