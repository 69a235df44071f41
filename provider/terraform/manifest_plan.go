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
	_, d := decodeManifest(req.Config.Raw, tftypes.Value{}, tftypes.Value{})
	resp.Diagnostics.Append(d...)
}

// ModifyPlan computes placement and rendered, so the plan shows per cluster
// what apply will do. They are unknown only when an input they depend on is.
// It reads and writes the raw plan (see manifest_raw.go).
func (r *manifestResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or the provider is not configured yet
	}
	m, d := decodeManifest(req.Config.Raw, resp.Plan.Raw, req.State.Raw)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	in, hasState := m.in, m.hasState
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
	stateID := m.recorded.id
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
		if m.planned.dependencies.IsNull() {
			set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
		}
		if in.template == nil {
			set[attrID] = stringUnknown
		}
		return
	}
	claimedBy := m.recorded.policy
	previous := previousBindings(in.template, m.recorded.placement, m.recorded.affinityTerm, claimedBy)
	if hasState && !m.planned.rescheduleTrigger.Equal(m.recorded.rescheduleTrigger) {
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
	var err error
	if set[attrRendered], err = renderedValue(r.data.SensitiveKinds.redactAll(worksObjects(res.Works))); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return
	}
	where := map[string]bool{}
	for cluster := range res.Works {
		where[cluster] = true
	}
	set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
	if !m.planned.dependencies.IsNull() {
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
	for _, cluster := range recordedClusters(m.recorded, prior) {
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
	if hasState && set[attrPlacement].Equal(m.recorded.placementRaw) && set[attrRendered].Equal(m.recorded.rendered) &&
		set[attrSuspendedClusters].Equal(m.recorded.suspendedRaw) &&
		set[attrDependenciesRendered].Equal(m.recorded.dependenciesRendered) && !m.recorded.status.IsNull() {
		set[attrStatus] = m.recorded.status
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
func recordedClusters(recorded manifestRecord, prior manifestPrivate) []string {
	out := append([]string(nil), prior.Applied...)
	for _, where := range prior.Dependencies {
		out = append(out, where...)
	}
	out = append(out, recorded.renderedClusters()...)
	var deps []tftypes.Value
	if recorded.dependenciesRendered.IsKnown() && !recorded.dependenciesRendered.IsNull() && recorded.dependenciesRendered.As(&deps) == nil {
		for _, d := range deps {
			elems, _ := rawMap(d)
			out = append(out, sortedKeys(elems)...)
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
