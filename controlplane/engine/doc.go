// Package engine is flotilla's synchronous driver: one call runs
// snapshot → schedule → render for a set of templates (Plan), or applies
// such a plan to the member clusters, refusing when the fleet has changed
// so much that the plan no longer holds (Apply), waits for it to become
// healthy (Wait), reads it back for drift (Observe) and removes it (Delete).
// Terraform and the CLI call it; they make no decisions of their own.
//
// It owns the member connections of its callers (one member.Cache) and a
// short-lived cache of cluster status, so that planning a hundred templates
// probes each member once. It never imports provider/.
package engine
