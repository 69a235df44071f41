package terraform

import (
	"strings"
	"testing"
)

// savedPlanConfig places ConfigMap default/web, with data v = version, in
// m1 and m2 of three members.
func savedPlanConfig(ms []*faultMember, version string) string {
	return faultClustersHCL(ms, false) + policyHCL("web", "default", "v1", "ConfigMap", []string{"m1", "m2"}, "") + configMapHCL("web", "web", version, "web", "")
}

// TestFaultMemberFrozenBetweenSavedPlanAndApply saves a plan that changes an
// object in m1 and m2 (terraform plan -out), then freezes m2's apiserver
// (SIGSTOP: connections hang, nothing answers) and applies the saved plan.
// Terraform plans the resource again before applying it and requires the
// values the saved plan showed; the provider must keep them, so the apply
// fails with flotilla's "The plan no longer holds" naming m2, not with
// Terraform's "Provider produced inconsistent final plan", and changes
// nothing in m1. Once m2 answers again, a new plan and apply converge.
func TestFaultMemberFrozenBetweenSavedPlanAndApply(t *testing.T) {
	t.Parallel()
	d := newTFDriver(t)
	ms := startFaultMembers(t, 3)
	frozen := ms[1]
	d.write(savedPlanConfig(ms, "1"))
	d.mustRun("apply", "-auto-approve", "-no-color")

	d.write(savedPlanConfig(ms, "2"))
	plan := d.mustRun("plan", "-no-color", "-out=saved.tfplan")
	if !strings.Contains(plan, "flotilla_manifest.web will be updated in-place") {
		t.Fatalf("the saved plan does not update flotilla_manifest.web:\n%s", plan)
	}

	frozen.env.FreezeAPIServer(t)
	out, code := d.run("apply", "-no-color", "saved.tfplan")
	t.Logf("terraform apply saved.tfplan (exit %d):\n%s", code, out)
	if code == 0 {
		t.Fatal("the saved plan was applied although m2 does not answer")
	}
	if strings.Contains(out, "inconsistent final plan") {
		t.Error("the provider changed planned values while Terraform planned the apply again")
	}
	if !strings.Contains(out, "The plan no longer holds") || !strings.Contains(out, "cluster "+frozen.name) {
		t.Errorf("the apply does not fail with \"The plan no longer holds\" naming cluster %s", frozen.name)
	}
	frozen.env.ThawAPIServer(t)
	// Nothing was applied: every member still holds the first version.
	checkNoOrphans(t, ms[:2], map[string]string{"web": "1"})
	checkNoOrphans(t, ms[2:], map[string]string{})

	d.mustRun("apply", "-auto-approve", "-no-color")
	checkNoOrphans(t, ms[:2], map[string]string{"web": "2"})
	checkNoOrphans(t, ms[2:], map[string]string{})
	d.expectEmptyPlan()
}
