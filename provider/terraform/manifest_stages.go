package terraform

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// stages: the claiming policy's staged rollout as the plan assigns it
// (plan.Result.Stages), each stage's name and clusters; null without a
// rollout. Apply goes through them with engine.ApplyStaged and records
// exactly which clusters run the new rendering (stagedRendered).
const attrStages = "stages"

var (
	stageType  = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "clusters": tftypes.List{ElementType: tftypes.String}}}
	stagesType = tftypes.List{ElementType: stageType}
)

// stagesValue is the stages attribute: null without stages.
func stagesValue(stages []policy.Stage) tftypes.Value {
	if stages == nil {
		return tftypes.NewValue(stagesType, nil)
	}
	elems := make([]tftypes.Value, len(stages))
	for i, s := range stages {
		clusters := make([]tftypes.Value, len(s.Clusters))
		for j, c := range s.Clusters {
			clusters[j] = tftypes.NewValue(tftypes.String, c)
		}
		elems[i] = tftypes.NewValue(stageType, map[string]tftypes.Value{
			"name":     tftypes.NewValue(tftypes.String, s.Name),
			"clusters": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, clusters),
		})
	}
	return tftypes.NewValue(stagesType, elems)
}

// stagesFromRaw reads the stages attribute (names and clusters only); null
// or unknown read as nil, a plan without a rollout.
func stagesFromRaw(v tftypes.Value) ([]policy.Stage, error) {
	if v.IsNull() || !v.IsKnown() {
		return nil, nil
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, fmt.Errorf("%s: %w", attrStages, err)
	}
	out := make([]policy.Stage, 0, len(elems))
	for i, e := range elems {
		var attrs map[string]tftypes.Value
		if err := e.As(&attrs); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", attrStages, i, err)
		}
		s := policy.Stage{Name: rawString(attrs["name"]), Clusters: []string{}}
		var clusters []tftypes.Value
		if err := attrs["clusters"].As(&clusters); err != nil {
			return nil, fmt.Errorf("%s[%d].clusters: %w", attrStages, i, err)
		}
		for _, c := range clusters {
			s.Clusters = append(s.Clusters, rawString(c))
		}
		out = append(out, s)
	}
	return out, nil
}

// stagedInput is what engine.ApplyStaged needs from the state: the stages
// the plan showed, the rendering each cluster runs now (its hash), and the
// object it ran, for a rollback. A kind whose recorded values are hashed
// (a Secret, sensitive_kinds) has no object to roll back to.
func stagedInput(ctx context.Context, m manifestRequest, sensitive sensitiveKinds) (engine.Staged, error) {
	shown, err := stagesFromRaw(m.planned.stages)
	if err != nil {
		return engine.Staged{}, err
	}
	recorded, err := renderedFromRaw(m.recorded.rendered, "the recorded rendered")
	if err != nil {
		return engine.Staged{}, err
	}
	s := engine.Staged{Shown: shown, Running: map[string]string{}, Previous: map[string]*unstructured.Unstructured{}}
	for cluster, obj := range recorded {
		s.Running[cluster] = obj.GetAnnotations()[render.AnnotationRenderedHash]
		if !sensitive.has(obj.Object) {
			s.Previous[cluster] = obj
		}
	}
	s.Progress = func(p engine.StagedProgress) {
		fields := map[string]any{"step": p.Step.String(), "clusters": strings.Join(p.Step.Clusters, ","), "updating": strings.Join(p.Updated, ",")}
		if p.Gate == nil {
			tflog.Info(ctx, "staged rollout: starting a step", fields)
			return
		}
		fields["elapsed"] = p.Gate.Elapsed.Round(time.Second).String()
		fields["not_ready"] = p.Gate.String()
		tflog.Info(ctx, "staged rollout: waiting on the gate", fields)
	}
	return s, nil
}

// stagedRendered is rendered after a staged apply: the planned object for
// the clusters that run it now (updated) and for the suspended ones (as an
// unstaged apply records them), the recorded object for the others, which
// still run it, and nothing for a cluster that runs nothing yet. So the
// next plan shows exactly the clusters still pending.
func stagedRendered(planned, recorded tftypes.Value, updated, suspended []string) tftypes.Value {
	now, _ := rawMap(planned)
	before, _ := rawMap(recorded)
	keep := map[string]bool{}
	for _, c := range append(append([]string(nil), updated...), suspended...) {
		keep[c] = true
	}
	out := make(map[string]tftypes.Value, len(now))
	for cluster, v := range now {
		if keep[cluster] {
			out[cluster] = v
		} else if old, ok := before[cluster]; ok {
			out[cluster] = old
		}
	}
	return tftypes.NewValue(renderedType, out)
}

// gateDetail is the diagnostic detail of a failed gate: why, which
// clusters run what now, and how to go on.
func gateDetail(g *engine.GateError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The gate after %s (clusters %s) failed: %v.\n", g.Step, strings.Join(g.Step.Clusters, ", "), g.Err)
	if len(g.Updated) > 0 {
		fmt.Fprintf(&b, "\nUpdated by this apply: %s.", strings.Join(g.Updated, ", "))
	}
	if len(g.RolledBack) > 0 {
		fmt.Fprintf(&b, "\nRolled back to what they ran before (on_gate_failure = Rollback): %s.", strings.Join(g.RolledBack, ", "))
	}
	if len(g.Pending) > 0 {
		fmt.Fprintf(&b, "\nNot started, still running what they ran before: %s.", strings.Join(g.Pending, ", "))
	}
	b.WriteString("\n\nThe state records which clusters run the new rendering, so the next plan shows the clusters still pending. " +
		"Fix the cause and run apply again: a new rendering (a fixed image) rolls out from the first stage again; with the same " +
		"rendering, the clusters already on it are only checked for health and the rollout continues with the pending ones.")
	return b.String()
}
