package terraform

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// ValidateConfig checks what can be checked without the engine: the shape
// of the manifest and that clusters and policies are flotilla resources.
func (r *manifestResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	attrs, err := rawAttributes(req.Config.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the configuration", err.Error())
		return
	}
	_, d := expandRaw(attrs)
	resp.Diagnostics.Append(d...)
}

// ModifyPlan computes placement and rendered, so the plan shows per cluster
// what apply will do. They are unknown only when an input they depend on is.
// It reads and writes the raw plan (see manifest_raw.go).
func (r *manifestResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or the provider is not configured yet
	}
	planned, err := rawAttributes(resp.Plan.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the plan", err.Error())
		return
	}
	hasState := !req.State.Raw.IsNull()
	state := map[string]tftypes.Value{}
	if hasState {
		if state, err = rawAttributes(req.State.Raw); err != nil {
			resp.Diagnostics.AddError("Cannot read the state", err.Error())
			return
		}
	}
	in, d := expandRaw(planned)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	set := map[string]tftypes.Value{}
	defer func() {
		if resp.Diagnostics.HasError() || len(set) == 0 {
			return
		}
		v, err := withAttributes(resp.Plan.Raw, set)
		if err != nil {
			resp.Diagnostics.AddError("Cannot record the plan", err.Error())
			return
		}
		resp.Plan.Raw = v
	}()
	stateID := rawString(state[attrID])
	if in.template != nil {
		id := render.TemplateRefOf(in.template).String()
		set[attrID] = tftypes.NewValue(tftypes.String, id)
		if hasState && stateID != "" && stateID != id && sameIdentityChanged(stateID, in.template) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("manifest"))
		}
	}
	if !in.known {
		set[attrPlacement] = tftypes.NewValue(placementType, tftypes.UnknownValue)
		set[attrRendered] = dynamicUnknown
		set[attrPolicy] = stringUnknown
		set[attrAffinityTerm] = stringUnknown
		set[attrStatus] = dynamicUnknown
		set[attrDependenciesRendered] = dynamicUnknown
		if planned[attrDependencies].IsNull() {
			set[attrDependenciesRendered] = dynamicNull
		}
		if in.template == nil {
			set[attrID] = stringUnknown
		}
		return
	}
	counts, err := rawPlacement(state[attrPlacement])
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("placement"), "Cannot read the recorded placement", err.Error())
		return
	}
	previous := previousBindings(in.template, counts, rawString(state[attrAffinityTerm]))
	if hasState && !planned[attrRescheduleTrigger].Equal(state[attrRescheduleTrigger]) {
		previous = nil // schedule from scratch, as Karmada's rescheduleTriggeredAt asks
	}
	templates := append([]*unstructured.Unstructured{in.template}, in.dependencies...)
	results, unreachable := r.data.Engine.Plan(ctx, in.fleet, templates, previous)
	for _, name := range sortedKeys(unreachable) {
		resp.Diagnostics.AddAttributeWarning(path.Root("clusters"), "Cluster "+name+" is not reachable",
			fmt.Sprintf("Planned as unreachable (tainted %s:NoExecute), so replicas move away from it: %v", "cluster.karmada.io/unreachable", unreachable[name]))
	}
	res := results[0]
	if res.Err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot place "+res.Template.String(), res.Err.Error())
		return
	}
	set[attrPolicy] = stringNull
	if res.Policy == nil {
		resp.Diagnostics.AddAttributeWarning(path.Root("propagation_policies"), "No propagation policy claims "+res.Template.String(),
			"It will not be applied to any cluster. Add a flotilla_propagation_policy whose resource_selectors match it.")
	} else {
		set[attrPolicy] = tftypes.NewValue(tftypes.String, res.Policy.String())
	}
	set[attrAffinityTerm] = stringNull
	if res.AffinityTerm != "" {
		set[attrAffinityTerm] = tftypes.NewValue(tftypes.String, res.AffinityTerm)
	}
	set[attrPlacement] = placementValue(placementCounts(res))
	if set[attrRendered], err = rawFromJSON(renderedJSON(res.Works)); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return
	}
	set[attrDependenciesRendered] = dynamicNull
	if !planned[attrDependencies].IsNull() {
		works := make([]map[string]render.Work, 0, len(in.dependencies))
		for i, dep := range results[1:] {
			at := path.Root("dependencies").AtListIndex(i)
			switch {
			case dep.Err != nil:
				resp.Diagnostics.AddAttributeError(at, "Cannot place "+dep.Template.String(), dep.Err.Error())
			case len(dep.Placement) == 0:
				resp.Diagnostics.AddAttributeWarning(at, dep.Template.String()+" goes to no cluster",
					"No propagation policy claims it, and it follows the workload only when the workload's pod template refers to it and the claiming policy has propagate_deps = true.")
			}
			works = append(works, dep.Works)
		}
		if resp.Diagnostics.HasError() {
			return
		}
		if set[attrDependenciesRendered], err = rawFromJSON(renderedListJSON(works)); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("dependencies"), "Cannot show the rendered objects", err.Error())
			return
		}
	}
	set[attrStatus] = dynamicUnknown
	if hasState && set[attrPlacement].Equal(state[attrPlacement]) && set[attrRendered].Equal(state[attrRendered]) &&
		set[attrDependenciesRendered].Equal(state[attrDependenciesRendered]) && !state[attrStatus].IsNull() {
		set[attrStatus] = state[attrStatus]
	}
	tflog.Debug(ctx, "planned manifest", map[string]any{"template": res.Template.String(), "clusters": len(res.Placement)})
}

// sameIdentityChanged reports whether the template's group, kind, namespace
// or name differ from the recorded id. A new version of the same kind does
// not replace the resource.
func sameIdentityChanged(id string, tmpl *unstructured.Unstructured) bool {
	old, err := render.ParseTemplateRef(id)
	if err != nil {
		return true
	}
	return old.ID() != render.TemplateRefOf(tmpl).ID()
}
