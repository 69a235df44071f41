// Package agent is the pull-mode agent (SetupAgent) and its registration
// in the hub (RegisterAgent): in its member, it registers its Cluster,
// renews its Lease, reports the member's status and runs the work
// package's execution and work status controllers for the Works of its
// execution namespace. The hub never needs the member's credentials.
//
// It imports controlplane/controller/shared and controlplane/controller/work
// (the same execution code as push), and no hub-only controller package.
package agent
