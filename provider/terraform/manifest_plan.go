package terraform

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// ValidateConfig checks what can be checked without the engine: the shape
// of the manifest and that clusters and policies are flotilla resources.
func (r *manifestResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m manifestModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	_, d := expandManifest(ctx, &m)
	resp.Diagnostics.Append(d...)
}

// ModifyPlan computes placement and rendered, so the plan shows per cluster
// what apply will do. They are unknown only when an input they depend on is.
func (r *manifestResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or the provider is not configured yet
	}
	var planned, state manifestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	hasState := !req.State.Raw.IsNull()
	if hasState {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	in, d := expandManifest(ctx, &planned)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if in.template != nil {
		planned.ID = types.StringValue(render.TemplateRefOf(in.template).String())
		if hasState && !state.ID.IsNull() && state.ID.ValueString() != planned.ID.ValueString() && sameIdentityChanged(state.ID.ValueString(), in.template) {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("manifest"))
		}
	}
	if !in.known {
		planned.Placement = types.MapUnknown(types.Int64Type)
		planned.Rendered = types.DynamicUnknown()
		planned.Policy = types.StringUnknown()
		planned.AffinityTerm = types.StringUnknown()
		planned.Status = types.DynamicUnknown()
		planned.DependenciesRendered = types.DynamicUnknown()
		if planned.Dependencies.IsNull() {
			planned.DependenciesRendered = types.DynamicNull()
		}
		if in.template == nil {
			planned.ID = types.StringUnknown()
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
		return
	}
	previous := previousBindings(ctx, in.template, state.Placement, state.AffinityTerm)
	if hasState && !planned.RescheduleTrigger.Equal(state.RescheduleTrigger) {
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
	if res.Policy == nil {
		resp.Diagnostics.AddAttributeWarning(path.Root("propagation_policies"), "No propagation policy claims "+res.Template.String(),
			"It will not be applied to any cluster. Add a flotilla_propagation_policy whose resource_selectors match it.")
		planned.Policy = types.StringNull()
	} else {
		planned.Policy = types.StringValue(res.Policy.String())
	}
	planned.AffinityTerm = types.StringNull()
	if res.AffinityTerm != "" {
		planned.AffinityTerm = types.StringValue(res.AffinityTerm)
	}
	planned.Placement = flattenPlacement(res)
	rendered, err := flattenRendered(res.Works)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return
	}
	planned.Rendered = rendered
	planned.DependenciesRendered = types.DynamicNull()
	if !planned.Dependencies.IsNull() {
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
		if planned.DependenciesRendered, err = flattenRenderedList(works); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("dependencies"), "Cannot show the rendered objects", err.Error())
			return
		}
	}
	if hasState && planned.Placement.Equal(state.Placement) && planned.Rendered.Equal(state.Rendered) &&
		planned.DependenciesRendered.Equal(state.DependenciesRendered) && !state.Status.IsNull() {
		planned.Status = state.Status
	} else {
		planned.Status = types.DynamicUnknown()
	}
	tflog.Debug(ctx, "planned manifest", map[string]any{"template": res.Template.String(), "clusters": len(res.Placement)})
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &planned)...)
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
