// Package work holds the execution and work status controllers, which the
// control plane runs for Push clusters and a pull-mode agent for its own
// cluster.
//
// Execution: one Work at a time, applies its manifests to the member with
// controlplane/execution (server-side apply, ownership labels, conflict
// refusal) and sets the Work's Applied condition; a deleted Work has its
// objects removed (or released) before its finalizer goes. An unready
// member is retried after Options.Resync without holding up other Works;
// the Work of a Cluster that no longer exists is deleted from the host.
//
// Work status: reads each applied Work's objects back from the member into
// status.manifestStatuses (controlplane/health's reflected status and
// health) and the Available condition. A change of an applied object in
// the member is told by a watch of the objects' metadata (statuswatch.go:
// per member and resource, selected by the fleet's ownership labels, and
// mapped to its Work through an index of the Works' manifests), coalesced
// per Work and rate limited per member; Options.StatusResync (while
// watched) or Options.Resync (otherwise) is the backstop. An object found
// missing brings the execution controller back at once.
//
// Both talk to a member only inside onMember: at most
// Options.MemberWorkers of a controller's workers on one member at once
// (memberSlots), each for at most Options.WorkTimeout, so a member that
// holds its requests cannot take every worker of the fleet.
//
// It imports controlplane/controller/shared and no other controller
// package.
package work
