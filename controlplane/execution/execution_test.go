package execution

import (
	"testing"
)

// TestExecution runs every check that needs members against one fleet of
// three apiserver-only members, because starting the fleet is the
// expensive part. Each check works in its own namespace; the outage check
// stops a member and so runs last.
func TestExecution(t *testing.T) {
	e := startEnv(t)
	t.Logf("3 members ready in %s", e.fleet.StartupTime)
	checks := []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"apply, re-apply, change and prune a Deployment", testLifecycle},
		{"an unowned object is refused with Abort and adopted with Overwrite", testConflict},
		{"only flotilla's own adoption marker releases an object", testForgedAdoption},
		{"another fleet's object is never adopted nor pruned", testOtherFleet},
		{"a CRD is established before its instances", testCRD},
		{"a missing namespace is created and never pruned nor deleted", testNamespaceSync},
		{"preserveResourcesOnDeletion releases instead of deleting", testPreserve},
		{"Karmada's objects: taken over without a write, deleted with their template", testKarmadaTakeOver},
		{"the managed view shows drift but not server defaults", testManagedView},
		{"cached reads: one list per kind and namespace, the same observations", testReadCache},
		{"an unreachable member fails alone and a retry converges", testOutage},
	}
	for _, c := range checks {
		if !t.Run(c.name, func(t *testing.T) { c.run(t, e) }) {
			return
		}
	}
}
