package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/status"
)

// privateKey is where flotilla_manifest keeps, in private state, the
// clusters its object may exist in and the deletion behaviour, so that
// pruning and deletion reach every cluster ever applied to, even after a
// failed apply.
const privateKey = "flotilla"

type manifestPrivate struct {
	// Applied lists the clusters where the object may exist.
	Applied []string `json:"applied"`
	// Dependencies lists, per dependency (its render.TemplateRef string),
	// the clusters where it may exist.
	Dependencies map[string][]string `json:"dependencies,omitempty"`
	// Preserve is the claiming policy's preserveResourcesOnDeletion.
	Preserve bool `json:"preserve,omitempty"`
	// Facts is the status of each member the last refresh read, which the
	// plans that follow it use instead of probing (see manifest_facts.go).
	Facts map[string]memberFacts `json:"facts,omitempty"`
	// Importing is set by ImportState for the Read that follows, which
	// fills the state from the members the import ID names.
	Importing bool `json:"importing,omitempty"`
	// Connections are the connections attribute's elements in state before
	// an update, for clusters no longer configured; never stored here.
	Connections map[string]tftypes.Value `json:"-"`
}

// privateGetter and privateSetter are what the framework's private state offers.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

func readPrivate(ctx context.Context, p privateGetter) (manifestPrivate, diag.Diagnostics) {
	var out manifestPrivate
	if p == nil {
		return out, nil
	}
	b, diags := p.GetKey(ctx, privateKey)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			diags.AddError("Corrupt private state", "flotilla_manifest's private state cannot be read: "+err.Error())
		}
	}
	return out, diags
}

func writePrivate(ctx context.Context, p privateSetter, v manifestPrivate) diag.Diagnostics {
	b, err := json.Marshal(v)
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Cannot record private state", err.Error())
		return d
	}
	return p.SetKey(ctx, privateKey, b)
}

func (r *manifestResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m manifestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(writeOnlyFrom(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := m.Timeouts.Create(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	r.apply(ctx, &m, manifestPrivate{}, timeout, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *manifestResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m manifestModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(writeOnlyFrom(ctx, req.Config, &m)...)
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(prior.Applied) == 0 {
		// Imported, or written by an older version: prune from wherever the state says it runs.
		var state manifestModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		objects, _ := renderedObjects(ctx, state.Rendered)
		prior.Applied = sortedKeys(objects)
	}
	if prior.Dependencies == nil {
		var state manifestModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		prior.Dependencies = dependencyClusters(ctx, &state)
	}
	timeout, d := m.Timeouts.Update(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	var recorded types.Map
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(attrConnections), &recorded)...)
	connections, err := recorded.ToTerraformValue(ctx)
	if err == nil {
		prior.Connections, err = rawConnections(connections)
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return
	}
	r.apply(ctx, &m, prior, timeout, &resp.State, resp.Private, &resp.Diagnostics)
}

// configGetter is what Create and Update requests offer to read the configuration.
type configGetter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// writeOnlyFrom copies the write-only fleet inputs from the configuration
// into m: the plan holds them as null. The state gets them as null too,
// as the framework nulls write-only attributes in what it records.
func writeOnlyFrom(ctx context.Context, config configGetter, m *manifestModel) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.Append(config.GetAttribute(ctx, path.Root(attrClusters), &m.Clusters)...)
	diags.Append(config.GetAttribute(ctx, path.Root(attrPropagationPolicies), &m.PropagationPolicies)...)
	diags.Append(config.GetAttribute(ctx, path.Root(attrOverridePolicies), &m.OverridePolicies)...)
	return diags
}

// recorded is m as state records it: the write-only inputs null.
func (m *manifestModel) recorded() manifestModel {
	out := *m
	out.Clusters, out.PropagationPolicies, out.OverridePolicies = types.DynamicNull(), types.DynamicNull(), types.DynamicNull()
	return out
}

// stateSetter is what Create and Update responses offer to record state.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// apply applies the planned placement exactly, records what happened, and
// waits for the rollout. State is written even when something failed, so
// nothing applied is forgotten; the clusters that failed keep showing a
// pending change.
func (r *manifestResource) apply(ctx context.Context, m *manifestModel, prior manifestPrivate, timeout time.Duration, state stateSetter, private privateSetter, diags *diag.Diagnostics) {
	in, d := expandManifest(ctx, m)
	diags.Append(d...)
	diags.Append(unsettledScope(in)...)
	if diags.HasError() {
		return
	}
	planned, err := plannedFrom(ctx, in, m, prior)
	if err != nil {
		diags.AddError("Cannot read the plan", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := r.data.Engine.Apply(ctx, in.fleet, planned)
	var stale *engine.StalePlanError
	if errors.As(err, &stale) {
		diags.AddAttributeError(path.Root("placement"), "The plan no longer holds", err.Error())
		return
	}
	if len(out) != len(planned) {
		diags.AddError("Apply failed", fmt.Sprintf("%v", err))
		return
	}
	a := out[0]
	ok := appliedOK(a)
	record := manifestPrivate{Applied: a.Clusters, Preserve: a.Result.PreserveResourcesOnDeletion}
	m.Rendered = keepApplied(ctx, m.Rendered, ok, diags)
	var failed []engine.Applied
	if a.Err != nil {
		failed = append(failed, a)
	}
	if len(out) > 1 {
		record.Dependencies = map[string][]string{}
		deps, err := renderedList(ctx, m.DependenciesRendered)
		if err != nil {
			diags.AddError("Cannot record the rendered dependencies", err.Error())
			return
		}
		kept := make([]map[string]map[string]any, len(deps))
		for i, dep := range out[1:] {
			record.Dependencies[render.TemplateRefOf(in.dependencies[i]).String()] = dep.Clusters
			okDep := appliedOK(dep)
			byCluster := map[string]map[string]any{}
			for cluster, obj := range deps[i] {
				if okDep[cluster] {
					byCluster[cluster] = obj.Object
				}
			}
			kept[i] = byCluster
			if dep.Err != nil {
				failed = append(failed, dep)
			}
		}
		if m.DependenciesRendered, err = renderedListModel(ctx, kept); err != nil {
			diags.AddError("Cannot record the rendered dependencies", err.Error())
			return
		}
	}
	if err := r.pruneDependencies(ctx, in, prior, &record); err != nil {
		diags.AddAttributeError(path.Root("dependencies"), "Cannot remove a dependency that is no longer listed", err.Error())
	}
	diags.Append(writePrivate(ctx, private, record)...)
	if m.Connections, err = appliedConnections(ctx, in.fleet.Members, out, prior.Connections); err != nil {
		diags.AddAttributeError(path.Root("connections"), "Cannot record the connections", err.Error())
	}
	m.Status = statusValue(health.Aggregated{Health: health.Unknown}, diags)
	if len(failed) > 0 {
		var summaries []string
		for _, f := range failed {
			summaries = append(summaries, f.Result.Template.String()+":\n"+outcomeSummary(f))
		}
		diags.AddAttributeError(path.Root("clusters"), "Apply of "+a.Result.Template.String()+" failed in some clusters",
			strings.Join(summaries, "\n")+"\n\nThe clusters that succeeded are recorded; run apply again to retry the others.")
		diags.Append(state.Set(ctx, m.recorded())...)
		return
	}
	// A held-back cluster got nothing: there is nothing there to wait for.
	for _, cluster := range a.Result.Suspended {
		delete(ok, cluster)
	}
	if m.WaitForRollout.ValueBool() && len(ok) > 0 {
		agg, err := r.data.Engine.Wait(ctx, in.fleet.Members, in.template, sortedStrings(ok), timeout, func(p status.Progress) {
			tflog.Info(ctx, "waiting for rollout", map[string]any{"object": p.Object, "elapsed": p.Elapsed.Round(time.Second).String(), "not_ready": p.String()})
		})
		m.Status = statusValue(agg, diags)
		if err != nil {
			diags.AddAttributeError(path.Root("status"), "Rollout of "+a.Result.Template.String()+" is not healthy", err.Error())
		}
	} else if len(ok) > 0 {
		m.Status = statusValue(health.Aggregate(in.template, nil), diags)
	}
	diags.Append(state.Set(ctx, m.recorded())...)
}

// plannedFrom reads what the plan showed: the placement and rendered
// hashes of the template and of each dependency, and where earlier applies
// left them.
func plannedFrom(ctx context.Context, in manifestInputs, m *manifestModel, prior manifestPrivate) ([]engine.Planned, error) {
	main := engine.Planned{Template: in.template, Applied: prior.Applied, AffinityTerm: m.AffinityTerm.ValueString()}
	suspended, err := suspendedFrom(ctx, m.SuspendedClusters)
	if err != nil {
		return nil, err
	}
	main.Suspended = suspended
	counts := map[string]int64{}
	if d := m.Placement.ElementsAs(ctx, &counts, false); d.HasError() {
		return nil, fmt.Errorf("placement: %s", d[0].Detail())
	}
	for _, name := range sortedKeys(counts) {
		main.Placement = append(main.Placement, api.TargetCluster{Name: name, Replicas: int32(counts[name])})
	}
	objects, err := renderedObjects(ctx, m.Rendered)
	if err != nil {
		return nil, err
	}
	main.Hashes = hashesOf(objects)
	planned := []engine.Planned{main}
	deps, err := renderedList(ctx, m.DependenciesRendered)
	if err != nil {
		return nil, err
	}
	if len(deps) != len(in.dependencies) {
		return nil, fmt.Errorf("dependencies_rendered has %d entries for %d dependencies", len(deps), len(in.dependencies))
	}
	for i, dep := range in.dependencies {
		p := engine.Planned{Template: dep, Hashes: hashesOf(deps[i]), Applied: prior.Dependencies[render.TemplateRefOf(dep).String()]}
		for _, cluster := range sortedKeys(deps[i]) {
			p.Placement = append(p.Placement, api.TargetCluster{Name: cluster})
		}
		planned = append(planned, p)
	}
	return planned, nil
}

func hashesOf(objects map[string]*unstructured.Unstructured) map[string]string {
	out := make(map[string]string, len(objects))
	for cluster, obj := range objects {
		out[cluster] = obj.GetAnnotations()[render.AnnotationRenderedHash]
	}
	return out
}

// dependencyClusters is where the state says each dependency runs.
func dependencyClusters(ctx context.Context, m *manifestModel) map[string][]string {
	out := map[string][]string{}
	deps, _, _ := dependenciesFromValue(ctx, m.Dependencies)
	rendered, err := renderedList(ctx, m.DependenciesRendered)
	if err != nil || len(rendered) != len(deps) {
		return out
	}
	for i, dep := range deps {
		out[render.TemplateRefOf(dep).String()] = sortedKeys(rendered[i])
	}
	return out
}

// appliedOK lists the placed clusters whose object was applied without error.
func appliedOK(a engine.Applied) map[string]bool {
	ok := map[string]bool{}
	for _, tc := range a.Result.Placement {
		ok[tc.Name] = true
	}
	for _, o := range a.Outcomes {
		if o.Action != execution.ActionApplied || o.Err != nil {
			delete(ok, o.Cluster)
		}
	}
	return ok
}

// keepApplied keeps in a rendered value only the clusters that were
// applied, so the others show as a change in the next plan.
func keepApplied(ctx context.Context, rendered types.Map, ok map[string]bool, diags *diag.Diagnostics) types.Map {
	objects, err := renderedObjects(ctx, rendered)
	if err != nil {
		diags.AddError("Cannot record the rendered objects", err.Error())
		return rendered
	}
	kept := map[string]map[string]any{}
	for cluster, obj := range objects {
		if ok[cluster] {
			kept[cluster] = obj.Object
		}
	}
	v, err := renderedModel(ctx, kept)
	if err != nil {
		diags.AddError("Cannot record the rendered objects", err.Error())
		return rendered
	}
	return v
}

// appliedConnections is the connections attribute after apply: every
// cluster the object or a dependency may now be in (placed, or left by a
// prune that failed), each connection from the configuration or, for a
// cluster no longer configured, as recorded before.
func appliedConnections(ctx context.Context, members []engine.Member, out []engine.Applied, recorded map[string]tftypes.Value) (types.Map, error) {
	names := map[string]bool{}
	for _, a := range out {
		for _, tc := range a.Result.Placement {
			names[tc.Name] = true
		}
		for _, c := range a.Clusters {
			names[c] = true
		}
	}
	v, err := connectionsValue(members, names, recorded)
	if err != nil {
		return types.MapNull(types.StringType), err
	}
	return stringMapModel(ctx, v)
}

func outcomeSummary(a engine.Applied) string {
	var lines []string
	for _, o := range a.Outcomes {
		line := fmt.Sprintf("  %s: %s", o.Cluster, o.Action)
		if o.Err != nil {
			line += ": " + o.Err.Error()
		} else if o.Reason != "" {
			line += ": " + o.Reason
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// statusJSON is the status attribute for an aggregated status, as JSON.
func statusJSON(agg health.Aggregated) map[string]any {
	clusters := map[string]any{}
	for _, c := range agg.Clusters {
		clusters[c.Cluster] = map[string]any{"health": string(c.Health), "message": c.Message}
	}
	aggregated := agg.Status
	if aggregated == nil {
		aggregated = map[string]any{}
	}
	return map[string]any{"health": string(agg.Health), "clusters": clusters, "aggregated": aggregated}
}

// statusValue is the status attribute for an aggregated status.
func statusValue(agg health.Aggregated, diags *diag.Diagnostics) types.Dynamic {
	v, err := valueFromJSON(statusJSON(agg))
	if err != nil {
		diags.AddError("Cannot record the status", err.Error())
		return types.DynamicNull()
	}
	return types.DynamicValue(v)
}

func (r *manifestResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m manifestModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	in, d := expandManifest(ctx, &m)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(unsettledScope(in)...)
	if resp.Diagnostics.HasError() || in.template == nil {
		return
	}
	connections, err := m.Connections.ToTerraformValue(ctx)
	var refused map[string]error
	if err == nil {
		in.fleet.Members, refused, err = membersFromConnections(connections, r.data.Trusted)
	}
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("connections"), "Cannot read the recorded connections", err.Error())
		return
	}
	if len(refused) > 0 {
		// Nothing is deleted anywhere: a destroy that runs again once the
		// provider block trusts the connection finds every object still there.
		resp.Diagnostics.AddAttributeError(path.Root("connections"), "Cannot remove "+render.TemplateRefOf(in.template).String()+": a recorded connection is not trusted",
			refusedSummary(refused)+"\n\nNothing was deleted and the resource stays in state. If the state is yours, add the plugin to the provider "+
				"block's trusted_exec and run destroy again.")
		return
	}
	objects, _ := renderedObjects(ctx, m.Rendered)
	clusters := map[string]bool{}
	for c := range objects {
		clusters[c] = true
	}
	for _, c := range prior.Applied {
		clusters[c] = true
	}
	timeout, d := m.Timeouts.Delete(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := r.data.Engine.Delete(ctx, in.fleet.Members, in.template, sortedStrings(clusters), prior.Preserve)
	for ref, where := range mergeClusters(prior.Dependencies, dependencyClusters(ctx, &m)) {
		for _, dep := range in.dependencies {
			if render.TemplateRefOf(dep).String() == ref && len(where) > 0 {
				res.Outcomes = append(res.Outcomes, r.data.Engine.Delete(ctx, in.fleet.Members, dep, where, prior.Preserve).Outcomes...)
			}
		}
	}
	if err := res.Err(); err != nil {
		resp.Diagnostics.AddError("Cannot remove "+render.TemplateRefOf(in.template).String()+" from every cluster",
			outcomeSummary(engine.Applied{Outcomes: res.Outcomes})+"\n\nNothing was forgotten: the resource stays in state; run destroy again once the clusters answer.")
	}
}

// mergeClusters unions two maps of cluster lists.
func mergeClusters(a, b map[string][]string) map[string][]string {
	sets := map[string]map[string]bool{}
	for _, m := range []map[string][]string{a, b} {
		for k, list := range m {
			if sets[k] == nil {
				sets[k] = map[string]bool{}
			}
			for _, c := range list {
				sets[k][c] = true
			}
		}
	}
	out := make(map[string][]string, len(sets))
	for k, set := range sets {
		out[k] = sortedStrings(set)
	}
	return out
}

// pruneDependencies removes the dependencies an earlier apply made that are
// no longer listed. Those whose removal fails stay recorded for next time.
func (r *manifestResource) pruneDependencies(ctx context.Context, in manifestInputs, prior manifestPrivate, record *manifestPrivate) error {
	listed := map[string]bool{}
	for _, dep := range in.dependencies {
		listed[render.TemplateRefOf(dep).String()] = true
	}
	var errs []error
	for _, ref := range sortedKeys(prior.Dependencies) {
		where := prior.Dependencies[ref]
		if listed[ref] || len(where) == 0 {
			continue
		}
		tmpl, err := templateFromImportID(ref)
		if err == nil {
			err = r.data.Engine.Delete(ctx, in.fleet.Members, tmpl, where, prior.Preserve).Err()
		}
		if err != nil {
			if record.Dependencies == nil {
				record.Dependencies = map[string][]string{}
			}
			record.Dependencies[ref] = where
			errs = append(errs, fmt.Errorf("%s: %w", ref, err))
		}
	}
	return errors.Join(errs...)
}
