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
	config, err := rawAttributes(req.Config.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the configuration", err.Error())
		return
	}
	attrs := withWriteOnly(planned, config)
	if hasState {
		// The recorded id holds the scope decided when the object was
		// first planned (manifest_scope.go).
		attrs[attrID] = state[attrID]
	}
	in, d := expandRaw(attrs)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	scopeReady, d := decideScope(ctx, r.data.Engine, &in)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !scopeReady {
		in.template, in.known = nil, false // the id waits for the members' connections
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
		set[attrSuspendedClusters] = tftypes.NewValue(suspendedType, tftypes.UnknownValue)
		set[attrRendered] = dynamicUnknown
		set[attrPolicy] = stringUnknown
		set[attrAffinityTerm] = stringUnknown
		set[attrStatus] = dynamicUnknown
		set[attrConnections] = tftypes.NewValue(connectionsType, tftypes.UnknownValue)
		set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, tftypes.UnknownValue)
		if planned[attrDependencies].IsNull() {
			set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
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
	claimedBy := rawString(state[attrPolicy])
	previous := previousBindings(in.template, counts, rawString(state[attrAffinityTerm]), claimedBy)
	if hasState && !planned[attrRescheduleTrigger].Equal(state[attrRescheduleTrigger]) {
		// Schedule from scratch, as Karmada's rescheduleTriggeredAt asks;
		// the claim is not a scheduling result and stays.
		previous = previousBindings(in.template, nil, "", claimedBy)
	}
	// Plan from the member status the refresh recorded, so that Terraform's
	// second plan, just before apply, comes out the same (manifest_facts.go).
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	withRecordedFacts(in.fleet.Members, prior.Facts)
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
	set[attrSuspendedClusters] = suspendedValue(res.Suspended)
	if set[attrRendered], err = renderedValue(r.data.SensitiveKinds.redactAll(worksObjects(res.Works))); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return
	}
	where := map[string]bool{}
	for cluster := range res.Works {
		where[cluster] = true
	}
	set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
	if !planned[attrDependencies].IsNull() {
		works := make([]map[string]map[string]any, 0, len(in.dependencies))
		for i, dep := range results[1:] {
			at := path.Root("dependencies").AtListIndex(i)
			switch {
			case dep.Err != nil:
				resp.Diagnostics.AddAttributeError(at, "Cannot place "+dep.Template.String(), dep.Err.Error())
			case len(dep.Placement) == 0:
				resp.Diagnostics.AddAttributeWarning(at, dep.Template.String()+" goes to no cluster",
					"No propagation policy claims it, and it follows the workload only when the workload's pod template refers to it and the claiming policy has propagate_deps = true.")
			}
			works = append(works, r.data.SensitiveKinds.redactAll(worksObjects(dep.Works)))
			for cluster := range dep.Works {
				where[cluster] = true
			}
		}
		if resp.Diagnostics.HasError() {
			return
		}
		if set[attrDependenciesRendered], err = renderedListValue(works); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("dependencies"), "Cannot show the rendered objects", err.Error())
			return
		}
	}
	// connections records the placed clusters. While an earlier apply left
	// the object or a dependency in a cluster it no longer goes to, apply
	// prunes it there and records that cluster only if the prune fails, so
	// connections is known only after apply.
	pending := false
	for _, cluster := range recordedClusters(state, prior) {
		pending = pending || !where[cluster]
	}
	set[attrConnections] = tftypes.NewValue(connectionsType, tftypes.UnknownValue)
	if !pending {
		if set[attrConnections], err = connectionsValue(in.fleet.Members, where, nil); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("connections"), "Cannot record the connections", err.Error())
			return
		}
	}
	set[attrStatus] = dynamicUnknown
	if hasState && set[attrPlacement].Equal(state[attrPlacement]) && set[attrRendered].Equal(state[attrRendered]) &&
		set[attrSuspendedClusters].Equal(state[attrSuspendedClusters]) &&
		set[attrDependenciesRendered].Equal(state[attrDependenciesRendered]) && !state[attrStatus].IsNull() {
		set[attrStatus] = state[attrStatus]
	}
	tflog.Debug(ctx, "planned manifest", map[string]any{"template": res.Template.String(), "clusters": len(res.Placement)})
}

// withWriteOnly is the planned attributes with the write-only fleet inputs
// taken from the configuration, since Terraform plans them as null.
func withWriteOnly(planned, config map[string]tftypes.Value) map[string]tftypes.Value {
	out := make(map[string]tftypes.Value, len(planned))
	for k, v := range planned {
		out[k] = v
	}
	for _, k := range []string{attrClusters, attrPropagationPolicies, attrOverridePolicies} {
		out[k] = config[k]
	}
	return out
}

// recordedClusters lists every cluster the state or private state says
// the object or one of its dependencies may be in.
func recordedClusters(state map[string]tftypes.Value, prior manifestPrivate) []string {
	out := append([]string(nil), prior.Applied...)
	for _, where := range prior.Dependencies {
		out = append(out, where...)
	}
	if objects, err := renderedFromRaw(state[attrRendered], "rendered"); err == nil {
		out = append(out, sortedKeys(objects)...)
	}
	if deps, err := renderedListFromRaw(state[attrDependenciesRendered]); err == nil {
		for _, objects := range deps {
			out = append(out, sortedKeys(objects)...)
		}
	}
	return out
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
