package terraform

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// The staged-rollout example's members: member1 is the canary, then the
// rest stage updates eu-west (member2) and us-east (member3), in name order.
var stagedMembers = []string{"member1", "member2", "member3"}

const (
	stagedAddr        = "flotilla_manifest.web"
	canaryBakeSeconds = 4
	restBakeSeconds   = 2
)

// stagedVars are the example's variables for the test: short bakes and
// timeouts, and one replica, the common canary size. With one replica the
// surge pod of a broken image leaves the old pod available, and Karmada's
// Deployment rule (every desired replica updated, every updated one
// available) judges it healthy: the gate must also wait for the rollout
// to complete, and so halts.
func (f *scenarioFleet) stagedVars(image, onFailure string) config.Variables {
	return f.vars(config.Variables{
		"image":                config.StringVariable(image),
		"replicas":             config.IntegerVariable(1),
		"on_gate_failure":      config.StringVariable(onFailure),
		"canary_bake_seconds":  config.IntegerVariable(canaryBakeSeconds),
		"bake_seconds":         config.IntegerVariable(restBakeSeconds),
		"gate_timeout_seconds": config.IntegerVariable(20),
	})
}

// scenarioStagedRollout runs examples/staged-rollout on three real
// members: the plan shows the stages; a good image goes to the canary, then
// (after the bake) to eu-west, then us-east, as the members' own timestamps
// show; the next plan is empty. A broken image stops at the 1-replica
// canary's gate (its old pod still available, the rollout not complete)
// with the other two untouched and still pending in the next plan; a fixed
// image rolls through again; with Rollback, the broken image is taken back
// off the canary before apply stops.
func scenarioStagedRollout(t *testing.T) {
	f := startScenarioFleet(t, 3)
	broken := "nginx:" + testenv.BrokenImageTag
	step := func(image, onFailure string) resource.TestStep {
		return resource.TestStep{
			ProtoV6ProviderFactories: testProviders,
			ConfigDirectory:          exampleDirectory("staged-rollout"),
			ConfigVariables:          f.stagedVars(image, onFailure),
		}
	}
	images := func(canary, rest string) map[string]string {
		return map[string]string{"member1": canary, "member2": rest, "member3": rest}
	}
	all := map[string]int32{"member1": 1, "member2": 1, "member3": 1}

	create := step("nginx:1.27", "Halt")
	create.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(stagedAddr, plancheck.ResourceActionCreate),
		plancheck.ExpectKnownValue(stagedAddr, tfjsonpath.New("stages"), knownvalue.ListExact([]knownvalue.Check{
			stageIs("canary", "canary"), stageIs("rest", "eu-west", "us-east"),
		})),
	}
	create.Check = resource.ComposeAggregateTestCheckFunc(
		f.expectDeployments("default", "web", all, images("nginx:1.27", "nginx:1.27")),
		f.expectStagedOrder(t),
	)

	unchanged := step("nginx:1.27", "Halt")
	unchanged.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}

	halt := step(broken, "Halt")
	halt.ExpectError = regexpMust("(?s)" + wrappedMessage("halted at stage canary").String() + ".*" +
		wrappedMessage("canary: rollout not complete: 1 old replica(s) pending").String() + ".*" + wrappedMessage("Not started, still running what they ran before: eu-west, us-east.").String())

	pending := step(broken, "Halt")
	pending.PreConfig = func() { f.requireImages(t, images(broken, "nginx:1.27")) }
	pending.PlanOnly, pending.ExpectNonEmptyPlan = true, true
	pending.ConfigPlanChecks.PostApplyPostRefresh = []plancheck.PlanCheck{renderedChanges(stagedAddr, "eu-west", "us-east")}

	fixed := step("nginx:1.28", "Halt")
	fixed.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{renderedChanges(stagedAddr, "canary", "eu-west", "us-east")}
	fixed.Check = resource.ComposeAggregateTestCheckFunc(
		f.expectDeployments("default", "web", all, images("nginx:1.28", "nginx:1.28")),
		f.expectStagedOrder(t),
	)

	rollback := step(broken, "Rollback")
	rollback.ExpectError = regexpMust("(?s)" + wrappedMessage("halted at stage canary").String() + ".*" +
		wrappedMessage("Rolled back to what they ran before (on_gate_failure = Rollback): canary.").String())

	rolledBack := step(broken, "Rollback")
	rolledBack.PreConfig = func() { f.requireImages(t, images("nginx:1.28", "nginx:1.28")) }
	rolledBack.PlanOnly, rolledBack.ExpectNonEmptyPlan = true, true
	rolledBack.ConfigPlanChecks.PostApplyPostRefresh = []plancheck.PlanCheck{renderedChanges(stagedAddr, "canary", "eu-west", "us-east")}

	resource.Test(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		Steps:                  []resource.TestStep{create, unchanged, halt, pending, fixed, rollback, rolledBack},
		CheckDestroy:           f.expectNoDeployment("default", "web"),
	})
}

// stageIs checks one element of stages.
func stageIs(name string, clusters ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(clusters))
	for i, c := range clusters {
		checks[i] = knownvalue.StringExact(c)
	}
	return knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact(name), "clusters": knownvalue.ListExact(checks)})
}

// flotillaWrite is when flotilla last wrote the member's Deployment: the
// time of its server-side apply in managedFields, as the member recorded
// it (whole seconds).
func (f *scenarioFleet) flotillaWrite(ctx context.Context, member string) (time.Time, error) {
	d, err := f.deployment(ctx, member, "default", "web")
	if err != nil || d == nil {
		return time.Time{}, fmt.Errorf("%s: deployment default/web: %v", member, err)
	}
	var at time.Time
	for _, mf := range d.ManagedFields {
		if mf.Manager == "flotilla" && mf.Time != nil && mf.Time.After(at) {
			at = mf.Time.Time
		}
	}
	if at.IsZero() {
		return at, fmt.Errorf("%s: deployment default/web has no managedFields entry of flotilla", member)
	}
	return at, nil
}

// expectStagedOrder checks, from the members' own timestamps, that the
// canary was written first, eu-west at least the canary's bake later, and
// us-east at least the rest stage's bake after eu-west (the timestamps
// have whole seconds, and each gap also holds the time to become healthy,
// so a gap of at least the bake is exact).
func (f *scenarioFleet) expectStagedOrder(t *testing.T) resource.TestCheckFunc {
	return func(*terraform.State) error {
		at := map[string]time.Time{}
		for _, m := range stagedMembers {
			w, err := f.flotillaWrite(context.Background(), m)
			if err != nil {
				return err
			}
			at[m] = w
		}
		t.Logf("flotilla wrote web at: canary %s, eu-west %s, us-east %s", at["member1"].Format(time.TimeOnly),
			at["member2"].Format(time.TimeOnly), at["member3"].Format(time.TimeOnly))
		if gap := at["member2"].Sub(at["member1"]); gap < canaryBakeSeconds*time.Second {
			return fmt.Errorf("eu-west was written %s after the canary, want at least the canary's %ds bake", gap, canaryBakeSeconds)
		}
		if gap := at["member3"].Sub(at["member2"]); gap < restBakeSeconds*time.Second {
			return fmt.Errorf("us-east was written %s after eu-west, want at least the rest stage's %ds bake", gap, restBakeSeconds)
		}
		return nil
	}
}

// requireImages fails the test unless each member's Deployment has the
// image given for it.
func (f *scenarioFleet) requireImages(t *testing.T, want map[string]string) {
	t.Helper()
	for _, m := range stagedMembers {
		d, err := f.deployment(context.Background(), m, "default", "web")
		if err != nil || d == nil {
			t.Fatalf("%s: deployment default/web: %v", m, err)
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != want[m] {
			t.Fatalf("%s: image %s, want %s", m, got, want[m])
		}
	}
}

// renderedChanges checks which clusters' rendered objects the plan
// changes (before != after): exactly want.
func renderedChanges(addr string, want ...string) plancheck.PlanCheck {
	return renderedChangesCheck{addr: addr, want: want}
}

type renderedChangesCheck struct {
	addr string
	want []string
}

func (c renderedChangesCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		after, _ := rc.Change.After.(map[string]any)
		was, _ := before["rendered"].(map[string]any)
		now, _ := after["rendered"].(map[string]any)
		var changed []string
		for cluster, v := range now {
			if was[cluster] != v {
				changed = append(changed, cluster)
			}
		}
		for cluster := range was {
			if _, ok := now[cluster]; !ok {
				changed = append(changed, cluster)
			}
		}
		slices.Sort(changed)
		if !slices.Equal(changed, c.want) {
			resp.Error = fmt.Errorf("%s: the plan changes rendered of %v, want %v", c.addr, changed, c.want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s: not in the plan", c.addr)
}
