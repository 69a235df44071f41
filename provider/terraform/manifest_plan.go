package terraform

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
)

// ValidateConfig checks what can be checked without the engine: the shape
// of the manifest and that clusters and policies are flotilla resources.
func (r *manifestResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	_, d := decodeManifest(req.Config.Raw, tftypes.Value{}, tftypes.Value{})
	resp.Diagnostics.Append(d...)
}

// ModifyPlan computes placement and rendered, so the plan shows per cluster
// what apply will do. They are unknown only when an input they depend on is.
// It reads and writes the raw plan (see manifest_raw.go), in steps: the
// identity, then either every computed attribute unknown or the engine's
// plan shown (placement and rendered, the dependencies, the connections,
// the status).
func (r *manifestResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy, or the provider is not configured yet
	}
	m, d := decodeManifest(req.Config.Raw, resp.Plan.Raw, req.State.Raw)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	scopeReady, d := decideScope(ctx, r.data.Engine, &m.in)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !scopeReady {
		m.in.template, m.in.known = nil, false // the id waits for the members' connections
	}
	set := map[string]tftypes.Value{}
	if planIdentity(m, set) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("manifest"))
	}
	if m.in.known {
		// The key comes from the refreshed private state only: a key made
		// here would differ from the one Terraform's final plan, at apply,
		// makes. Without one (a create, or -refresh=false over a state
		// written before keys) sensitive values show untagged.
		key, d := readSensitiveKey(ctx, req.Private)
		resp.Diagnostics.Append(d...)
		r.planPlacement(ctx, m, req.Private, key, set, &resp.Diagnostics)
	} else {
		planUnknown(m, set)
	}
	if resp.Diagnostics.HasError() || len(set) == 0 {
		return
	}
	v, err := withAttributes(resp.Plan.Raw, set)
	if err != nil {
		resp.Diagnostics.AddError("Cannot record the plan", err.Error())
		return
	}
	resp.Plan.Raw = v
}

// planIdentity sets the id from the template and reports whether the
// change of template replaces the resource: a changed group, kind,
// namespace or name does, a new version of the same kind does not.
func planIdentity(m manifestRequest, set map[string]tftypes.Value) (replace bool) {
	if m.in.template == nil {
		return false
	}
	id := api.TemplateRefOf(m.in.template).String()
	set[attrID] = tftypes.NewValue(tftypes.String, id)
	recorded := m.recorded.id
	return m.hasState && recorded != "" && recorded != id && sameIdentityChanged(recorded, m.in.template)
}

// planUnknown marks every computed attribute unknown, for a plan whose
// inputs are not all known yet. dependencies_rendered stays null without
// dependencies, and the id is unknown only while the template is.
func planUnknown(m manifestRequest, set map[string]tftypes.Value) {
	set[attrPlacement] = tftypes.NewValue(placementType, tftypes.UnknownValue)
	set[attrSuspendedClusters] = tftypes.NewValue(suspendedType, tftypes.UnknownValue)
	set[attrStages] = tftypes.NewValue(stagesType, tftypes.UnknownValue)
	set[attrRendered] = dynamicUnknown
	set[attrPolicy] = stringUnknown
	set[attrAffinityTerm] = stringUnknown
	set[attrStatus] = dynamicUnknown
	set[attrConnections] = tftypes.NewValue(connectionsType, tftypes.UnknownValue)
	set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, tftypes.UnknownValue)
	if m.planned.dependencies.IsNull() {
		set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
	}
	if m.in.template == nil {
		set[attrID] = stringUnknown
	}
}

// planPlacement plans the template and its dependencies with the engine and
// shows the result.
func (r *manifestResource) planPlacement(ctx context.Context, m manifestRequest, private privateGetter, key []byte, set map[string]tftypes.Value, diags *diag.Diagnostics) {
	// Plan from the member status the refresh recorded, so that Terraform's
	// second plan, just before apply, comes out the same (manifest_facts.go).
	prior, d := readPrivate(ctx, private)
	diags.Append(d...)
	withRecordedFacts(m.in.fleet.Members, prior.Facts)
	templates := append([]*unstructured.Unstructured{m.in.template}, m.in.dependencies...)
	results, unreachable := r.data.Engine.Plan(ctx, m.in.fleet, templates, []engine.Previous{previousOf(m)})
	for _, name := range sortedKeys(unreachable) {
		diags.AddAttributeWarning(path.Root("clusters"), "Cluster "+name+" is not reachable",
			fmt.Sprintf("Planned as unreachable (tainted %s:NoExecute), so replicas move away from it: %v", api.TaintClusterUnreachable, unreachable[name]))
	}
	where, d := showResult(results[0], r.data.SensitiveKinds, key, set)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	diags.Append(nodeLimitWarnings(results[0], m.recorded.placement)...)
	diags.Append(showDependencies(results[1:], !m.planned.dependencies.IsNull(), r.data.SensitiveKinds, key, set, where)...)
	if diags.HasError() {
		return
	}
	diags.Append(planConnections(m, prior, where, set)...)
	planStatus(m, set)
	tflog.Debug(ctx, "planned manifest", map[string]any{"template": results[0].Template.Describe(), "clusters": len(results[0].Placement)})
}

// nodeLimitWarnings says, for each cluster whose replicas the plan
// changes, when its nodes hold fewer replicas than its summed free
// resources would allow (plan.Result.NodeLimited), so a smaller share than
// the cluster-wide figures promise is explained in the plan. A cluster whose
// replicas the plan keeps says nothing: a plan without changes stays quiet.
func nodeLimitWarnings(res plan.Result, recorded map[string]int64) diag.Diagnostics {
	var diags diag.Diagnostics
	counts := placementCounts(res)
	for _, l := range res.NodeLimited {
		n := counts[l.Cluster]
		if was, ok := recorded[l.Cluster]; ok && was == n {
			continue
		}
		diags.AddAttributeWarning(path.Root(attrPlacement).AtMapKey(l.Cluster),
			fmt.Sprintf("Cluster %s's share is limited by its nodes", l.Cluster),
			fmt.Sprintf("%s: %d (%s). Replicas are estimated node by node, as kube-scheduler will place them, "+
				"not from the cluster's summed free resources.", l.Cluster, n, l))
	}
	return diags
}

// previousOf is the recorded scheduling result the plan resumes from. A
// changed reschedule_trigger schedules from scratch, as Karmada's
// rescheduleTriggeredAt asks; the claim is not a scheduling result and
// stays.
func previousOf(m manifestRequest) engine.Previous {
	var p engine.Previous
	if claim, ok := parsePolicyRef(m.recorded.policy); ok {
		p.Claim = &claim
	}
	if m.hasState && !m.planned.rescheduleTrigger.Equal(m.recorded.rescheduleTrigger) {
		return p
	}
	for _, name := range sortedKeys(m.recorded.placement) {
		p.Placement = append(p.Placement, api.TargetCluster{Name: name, Replicas: int32(m.recorded.placement[name])})
	}
	p.AffinityTerm = m.recorded.affinityTerm
	return p
}

// showResult sets what the template's plan shows: policy, affinity_term,
// placement, suspended_clusters and rendered. where lists the clusters it
// goes to.
func showResult(res plan.Result, sensitive sensitiveKinds, key []byte, set map[string]tftypes.Value) (where map[string]bool, diags diag.Diagnostics) {
	if res.Err != nil {
		diags.AddAttributeError(path.Root("manifest"), "Cannot place "+res.Template.Describe(), res.Err.Error())
		return nil, diags
	}
	set[attrPolicy] = stringNull
	if res.Policy == nil {
		diags.AddAttributeWarning(path.Root("propagation_policies"), "No propagation policy claims "+res.Template.Describe(),
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
	set[attrStages] = stagesValue(res.Stages)
	var err error
	if set[attrRendered], err = renderedValue(sensitive.redactAll(worksObjects(res.Works), key)); err != nil {
		diags.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return nil, diags
	}
	where = map[string]bool{}
	for cluster := range res.Works {
		where[cluster] = true
	}
	return where, diags
}

// showDependencies sets dependencies_rendered from the dependencies'
// plans, null when the dependencies attribute is (listed is false), and
// adds the clusters they go to to where.
func showDependencies(results []plan.Result, listed bool, sensitive sensitiveKinds, key []byte, set map[string]tftypes.Value, where map[string]bool) diag.Diagnostics {
	var diags diag.Diagnostics
	set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, nil)
	if !listed {
		return nil
	}
	works := make([]map[string]map[string]any, 0, len(results))
	for i, dep := range results {
		at := path.Root("dependencies").AtListIndex(i)
		switch {
		case dep.Err != nil:
			diags.AddAttributeError(at, "Cannot place "+dep.Template.Describe(), dep.Err.Error())
		case len(dep.Placement) == 0:
			diags.AddAttributeWarning(at, dep.Template.Describe()+" goes to no cluster",
				"No propagation policy claims it, and it follows the workload only when the workload's pod template refers to it and the claiming policy has propagate_deps = true.")
		}
		works = append(works, sensitive.redactAll(worksObjects(dep.Works), key))
		for cluster := range dep.Works {
			where[cluster] = true
		}
	}
	if diags.HasError() {
		return diags
	}
	var err error
	if set[attrDependenciesRendered], err = renderedListValue(works); err != nil {
		diags.AddAttributeError(path.Root("dependencies"), "Cannot show the rendered objects", err.Error())
	}
	return diags
}

// planConnections sets connections to the placed clusters' (where). While
// an earlier apply left the object or a dependency in a cluster it no
// longer goes to, apply prunes it there and records that cluster only if
// the prune fails, so connections is known only after apply.
func planConnections(m manifestRequest, prior manifestPrivate, where map[string]bool, set map[string]tftypes.Value) diag.Diagnostics {
	set[attrConnections] = tftypes.NewValue(connectionsType, tftypes.UnknownValue)
	for _, cluster := range recordedClusters(m.recorded, prior) {
		if !where[cluster] {
			return nil
		}
	}
	var diags diag.Diagnostics
	var err error
	if set[attrConnections], err = connectionsValue(m.in.fleet.Members, where, nil); err != nil {
		diags.AddAttributeError(path.Root("connections"), "Cannot record the connections", err.Error())
	}
	return diags
}

// planStatus keeps the recorded status when the plan changes nothing it
// depends on; otherwise status is known only after apply.
func planStatus(m manifestRequest, set map[string]tftypes.Value) {
	set[attrStatus] = dynamicUnknown
	r := m.recorded
	if m.hasState && set[attrPlacement].Equal(r.placementRaw) && set[attrRendered].Equal(r.rendered) &&
		set[attrSuspendedClusters].Equal(r.suspendedRaw) && set[attrDependenciesRendered].Equal(r.dependenciesRendered) && !r.status.IsNull() {
		set[attrStatus] = r.status
	}
}

// withWriteOnly is the planned attributes with the write-only fleet inputs
// taken from the configuration, since Terraform plans them as null.
func withWriteOnly(planned, config map[string]tftypes.Value) map[string]tftypes.Value {
	out := make(map[string]tftypes.Value, len(planned))
	for k, v := range planned {
		out[k] = v
	}
	for _, k := range []string{attrClusters, attrPropagationPolicies, attrOverridePolicies, attrResourceInterpreters, attrQuotas} {
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
	old, err := api.ParseTemplateRef(id)
	if err != nil {
		return true
	}
	return old.ID() != api.TemplateRefOf(tmpl).ID()
}
