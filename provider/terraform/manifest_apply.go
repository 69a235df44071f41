package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
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
	// Dependencies lists, per dependency (its api.TemplateRef string),
	// the clusters where it may exist.
	Dependencies map[string][]string `json:"dependencies,omitempty"`
	// Preserve is the claiming policy's preserveResourcesOnDeletion.
	Preserve bool `json:"preserve,omitempty"`
	// Facts is the status of each member the last refresh read, which the
	// plans that follow it use instead of probing (see manifest_facts.go).
	Facts map[string]memberFacts `json:"facts,omitempty"`
	// Interpreters are the resource_interpreters of the last apply: the
	// attribute is write-only, and refresh judges health and aggregates
	// status with them.
	Interpreters []api.ResourceInterpreterCustomization `json:"interpreters,omitempty"`
	// Importing is set by ImportState for the Read that follows, which
	// fills the state from the members the import ID names.
	Importing bool `json:"importing,omitempty"`
	// Karmada is the grant an import of objects a stopped Karmada applied
	// leaves for the applies that follow, which take them over in place;
	// kept until each of its clusters was applied.
	Karmada *execution.KarmadaAdoption `json:"karmada,omitempty"`
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

// Create applies the planned rendering to every placed cluster, waits for the rollout within the
// timeouts and records what each cluster runs.
func (r *manifestResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	m, d := decodeManifest(req.Config.Raw, req.Plan.Raw, tftypes.Value{})
	resp.Diagnostics.Append(d...)
	t, d := timeoutsOf(ctx, req.Plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := t.Create(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	// The plan had no key to tag sensitive values with (sensitive.go); the
	// resource's own starts here, and the next refresh records the tags.
	_, d = newSensitiveKey(ctx, resp.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, m, manifestPrivate{}, nil, timeout, req.Plan.Raw, &resp.State, resp.Private, &resp.Diagnostics)
}

// Update applies the new plan as Create does, and removes the object from the clusters the plan
// no longer places it on.
func (r *manifestResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	m, d := decodeManifest(req.Config.Raw, req.Plan.Raw, req.State.Raw)
	resp.Diagnostics.Append(d...)
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	// req.Private is the planned private state: the key the plan tagged
	// with, if it had one; otherwise one starts here, as in Create.
	key, d := readSensitiveKey(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if key == nil {
		_, d = newSensitiveKey(ctx, resp.Private)
		resp.Diagnostics.Append(d...)
	}
	t, d := timeoutsOf(ctx, req.Plan)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(prior.Applied) == 0 {
		// Imported, or written by an older version: prune from wherever the state says it runs.
		prior.Applied = m.recorded.renderedClusters()
	}
	if prior.Dependencies == nil {
		prior.Dependencies = m.recorded.dependencyClusters()
	}
	timeout, d := t.Update(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	var err error
	if prior.Connections, err = rawConnections(m.recorded.connections); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return
	}
	r.apply(ctx, m, prior, key, timeout, req.Plan.Raw, &resp.State, resp.Private, &resp.Diagnostics)
}

// timeoutsOf reads the timeouts block of a plan or state, alone.
func timeoutsOf(ctx context.Context, from interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}) (timeouts.Value, diag.Diagnostics) {
	var t timeouts.Value
	d := from.GetAttribute(ctx, path.Root(attrTimeouts), &t)
	return t, d
}

// apply applies the planned placement exactly, records what happened, and
// waits for the rollout. State is the plan with what apply learnt set, and
// it is written even when something failed, so nothing applied is
// forgotten; the clusters that failed keep showing a pending change.
func (r *manifestResource) apply(ctx context.Context, m manifestRequest, prior manifestPrivate, key []byte, timeout time.Duration, plan tftypes.Value, state *tfsdk.State, private privateSetter, diags *diag.Diagnostics) {
	in := m.in
	diags.Append(unsettledScope(in)...)
	if diags.HasError() {
		return
	}
	planned, err := plannedFrom(in, m.planned, prior, r.data.SensitiveKinds, key)
	if err != nil {
		diags.AddError("Cannot read the plan", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []engine.Applied
	var staged *engine.StagedResult
	if m.planned.stages.IsNull() {
		out, err = r.data.Engine.Apply(ctx, in.fleet, planned)
	} else {
		s, serr := stagedInput(ctx, m, r.data.SensitiveKinds)
		if serr != nil {
			diags.AddAttributeError(path.Root(attrStages), "Cannot read the plan", serr.Error())
			return
		}
		var res engine.StagedResult
		res, err = r.data.Engine.ApplyStaged(ctx, in.fleet, planned, s)
		out, staged = res.Applied, &res
	}
	var gate *engine.GateError
	if errors.As(err, &gate) {
		err = nil // reported below, once what was done is recorded
	}
	var stale *engine.StalePlanError
	if errors.As(err, &stale) {
		diags.AddAttributeError(path.Root("placement"), "The plan no longer holds", err.Error())
		return
	}
	if len(out) != len(planned) {
		diags.AddError("Apply failed", fmt.Sprintf("%v", err))
		return
	}
	// The write-only inputs are recorded as null, as the plan holds them.
	dynamicNull := tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	set := map[string]tftypes.Value{attrClusters: dynamicNull, attrPropagationPolicies: dynamicNull, attrOverridePolicies: dynamicNull, attrResourceInterpreters: dynamicNull, attrQuotas: dynamicNull}
	record := func() {
		v, err := withAttributes(plan, set)
		if err != nil {
			diags.AddError("Cannot record the state", err.Error())
			return
		}
		state.Raw = v
	}
	a := out[0]
	ok := appliedOK(a)
	written := manifestPrivate{Applied: a.Clusters, Preserve: a.Result.PreserveResourcesOnDeletion, Interpreters: in.customizations,
		Karmada: karmadaLeft(prior.Karmada, ok)}
	set[attrRendered] = keepClusters(m.planned.rendered, ok)
	if staged != nil {
		set[attrRendered] = stagedRendered(m.planned.rendered, m.recorded.rendered, staged.Updated, a.Result.Suspended)
	}
	var failed []engine.Applied
	if a.Err != nil {
		failed = append(failed, a)
	}
	if len(out) > 1 {
		written.Dependencies = map[string][]string{}
		var deps []tftypes.Value
		if err := m.planned.dependenciesRendered.As(&deps); err != nil || len(deps) != len(out)-1 {
			diags.AddError("Cannot record the rendered dependencies", fmt.Sprintf("dependencies_rendered has %d entries for %d dependencies (%v)", len(deps), len(out)-1, err))
			return
		}
		kept := make([]tftypes.Value, len(deps))
		for i, dep := range out[1:] {
			written.Dependencies[api.TemplateRefOf(in.dependencies[i]).String()] = dep.Clusters
			kept[i] = keepClusters(deps[i], appliedOK(dep))
			if dep.Err != nil {
				failed = append(failed, dep)
			}
		}
		set[attrDependenciesRendered] = tftypes.NewValue(dependenciesRenderedType, kept)
	}
	if err := r.pruneDependencies(ctx, in, prior, &written); err != nil {
		diags.AddAttributeError(path.Root("dependencies"), "Cannot remove a dependency that is no longer listed", err.Error())
	}
	diags.Append(writePrivate(ctx, private, written)...)
	if set[attrConnections], err = appliedConnections(in.fleet.Members, out, prior.Connections); err != nil {
		set[attrConnections] = tftypes.NewValue(connectionsType, nil)
		diags.AddAttributeError(path.Root("connections"), "Cannot record the connections", err.Error())
	}
	set[attrStatus] = statusValue(health.Aggregated{Health: health.Unknown}, diags)
	if len(failed) > 0 {
		var summaries []string
		for _, f := range failed {
			summaries = append(summaries, f.Result.Template.Describe()+":\n"+outcomeSummary(f))
		}
		diags.AddAttributeError(path.Root("clusters"), "Apply of "+a.Result.Template.Describe()+" failed in some clusters",
			strings.Join(summaries, "\n")+"\n\nThe clusters that succeeded are recorded; run apply again to retry the others.")
		record()
		return
	}
	if staged != nil {
		set[attrStatus] = statusValue(staged.Health, diags)
		if gate != nil {
			diags.AddAttributeError(path.Root(attrStages), "Rollout of "+a.Result.Template.Describe()+" halted at "+gate.Step.String(), gateDetail(gate))
		}
		record()
		return
	}
	// A held-back cluster got nothing: there is nothing there to wait for.
	for _, cluster := range a.Result.Suspended {
		delete(ok, cluster)
	}
	if m.planned.waitForRollout && len(ok) > 0 {
		agg, err := r.data.Engine.Wait(ctx, in.fleet, in.template, sortedStrings(ok), timeout, func(p status.Progress) {
			tflog.Info(ctx, "waiting for rollout", map[string]any{"object": p.Object, "elapsed": p.Elapsed.Round(time.Second).String(), "not_ready": p.String()})
		})
		set[attrStatus] = statusValue(agg, diags)
		if err != nil {
			diags.AddAttributeError(path.Root("status"), "Rollout of "+a.Result.Template.Describe()+" is not healthy", err.Error())
		}
	} else if len(ok) > 0 {
		set[attrStatus] = statusValue(health.Aggregate(in.template, nil), diags)
	}
	record()
}

// plannedFrom reads what the plan showed: the placement and rendered
// hashes of the template and of each dependency, and where earlier applies
// left them. A sensitive kind's hashes were shown keyed with key.
func plannedFrom(in manifestInputs, p manifestRecord, prior manifestPrivate, sensitive sensitiveKinds, key []byte) ([]engine.Planned, error) {
	shown := func(tmpl *unstructured.Unstructured) func(string) string {
		if !sensitive.has(tmpl.Object) {
			return nil
		}
		return func(hash string) string { return shownRenderedHash(key, hash) }
	}
	main := engine.Planned{Template: in.template, Applied: prior.Applied, AffinityTerm: p.affinityTerm, Suspended: p.suspended, Shown: shown(in.template), Karmada: prior.Karmada}
	for _, name := range sortedKeys(p.placement) {
		main.Placement = append(main.Placement, api.TargetCluster{Name: name, Replicas: int32(p.placement[name])})
	}
	objects, err := renderedFromRaw(p.rendered, "rendered")
	if err != nil {
		return nil, err
	}
	main.Hashes = hashesOf(objects)
	planned := []engine.Planned{main}
	deps, err := renderedListFromRaw(p.dependenciesRendered)
	if err != nil {
		return nil, err
	}
	if len(deps) != len(in.dependencies) {
		return nil, fmt.Errorf("dependencies_rendered has %d entries for %d dependencies", len(deps), len(in.dependencies))
	}
	for i, dep := range in.dependencies {
		p := engine.Planned{Template: dep, Hashes: hashesOf(deps[i]), Applied: prior.Dependencies[api.TemplateRefOf(dep).String()], Shown: shown(dep)}
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

// keepClusters keeps of a rendered value only the clusters in keep, as they
// are (the JSON is not decoded), so the others show as a change in the next
// plan. Null reads as no cluster.
func keepClusters(rendered tftypes.Value, keep map[string]bool) tftypes.Value {
	elems, _ := rawMap(rendered)
	kept := make(map[string]tftypes.Value, len(elems))
	for cluster, e := range elems {
		if keep[cluster] {
			kept[cluster] = e
		}
	}
	return tftypes.NewValue(renderedType, kept)
}

// appliedConnections is the connections attribute after apply: every
// cluster the object or a dependency may now be in (placed, or left by a
// prune that failed), each connection from the configuration or, for a
// cluster no longer configured, as recorded before.
func appliedConnections(members []engine.Member, out []engine.Applied, recorded map[string]tftypes.Value) (tftypes.Value, error) {
	names := map[string]bool{}
	for _, a := range out {
		for _, tc := range a.Result.Placement {
			names[tc.Name] = true
		}
		for _, c := range a.Clusters {
			names[c] = true
		}
	}
	return connectionsValue(members, names, recorded)
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

// statusValue is the status attribute for an aggregated status; null when
// it cannot be recorded, with an error.
func statusValue(agg health.Aggregated, diags *diag.Diagnostics) tftypes.Value {
	v, err := rawFromJSON(statusJSON(agg))
	if err != nil {
		diags.AddError("Cannot record the status", err.Error())
		return tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	}
	return v
}
