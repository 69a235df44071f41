// Package execution applies rendered works to member clusters and removes
// them again. It owns the engine's writes to members: server-side apply with
// flotilla's field manager, namespace sync, CustomResourceDefinitions before
// the objects of their kinds, the refusal to touch objects flotilla does not
// own, pruning and release, and reading objects back with the view of the
// fields flotilla manages.
//
// Every call reports, per cluster and per object, exactly what happened
// (Result), so a caller records everything and nothing is applied and then
// forgotten. A member that cannot be reached fails on its own; the others
// are still applied.
//
// Ownership. An object in a member is this fleet's object for a template
// when it carries app.kubernetes.io/managed-by=flotilla, flotilla.io/fleet
// with the fleet's name and flotilla.io/template naming the same template
// (the API version may differ). Only such objects are updated without
// asking, pruned or released. Any other existing object is a conflict:
// refused with Abort, adopted (and marked adopted) with Overwrite. An
// object of another flotilla
// fleet is refused even with Overwrite: two fleets sharing a member would
// otherwise take objects from each other on every apply, and the loser's
// prune would delete the winner's object.
//
// Namespaces. A namespaced object whose namespace is missing gets it
// created, labelled managed-by and fleet but with no template annotation,
// and reported as CreatedNamespace. Such a namespace is never pruned; a
// Namespace template of the same fleet may claim it without a conflict.
//
// Removal. Pruning and deletion delete with background propagation. With
// preserveResourcesOnDeletion the object is released, not deleted: the
// ownership labels, annotations and flotilla's managedFields entries are
// removed and the object is left as it is. An object flotilla adopted
// (it existed before, and Overwrite took it over) carries the annotation
// flotilla.io/adopted, set by its own field manager just before the
// adopting apply, and is always released rather than deleted: flotilla
// deletes only what it created. The annotation counts only with that
// manager's ownership, so a copy whose template carried it is deleted.
//
// It reaches members only through the Connector it is given; connection
// caching and health probing belong to package member. Deciding what goes
// where belongs to the pure core (plan, render). It may import client-go and
// the pure core; it must not import provider/, controller-runtime or
// internal/testenv (tests excepted).
package execution
