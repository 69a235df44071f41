// Package cronfederatedhpa is Karmada's CronFederatedHPA controller: each
// rule of a CronFederatedHPA, at the times its cron schedule names in its
// time zone, sets the replicas of a template on the host (through the
// template kind's scale subresource; the scheduler then divides them
// among the members as usual) or the minReplicas/maxReplicas of a
// FederatedHPA (a merge patch of those two fields), and records the
// execution in the rule's history in status.
//
// Unlike Karmada's, which keeps one in-memory cron job per rule, it is
// level-triggered: each rule's nextExecutionTime in status is the state.
// A reconcile runs the rules whose time has come (once, however many
// times were missed while no control plane ran), records the next time,
// and arms one timer on the injected clock (Options.CronClock) for the
// earliest next time. A restarted or newly elected control plane picks
// the schedule up from status.
//
// It imports controlplane/controller/shared and no other controller
// package.
package cronfederatedhpa
