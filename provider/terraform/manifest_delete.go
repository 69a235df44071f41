package terraform

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
)

// Delete removes the object and its dependencies from every cluster the
// state or private state says they may be in, through the recorded
// connections.
func (r *manifestResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, d := decodeManifest(tftypes.Value{}, tftypes.Value{}, req.State.Raw)
	resp.Diagnostics.Append(d...)
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	in, refused, ok := r.recordedInputs(m, &resp.Diagnostics)
	if !ok {
		return
	}
	if len(refused) > 0 {
		// Nothing is deleted anywhere: a destroy that runs again once the
		// provider block trusts the connection finds every object still there.
		resp.Diagnostics.AddAttributeError(path.Root("connections"), "Cannot remove "+api.TemplateRefOf(in.template).String()+": a recorded connection is not trusted",
			refusedSummary(refused)+"\n\nNothing was deleted and the resource stays in state. If the state is yours, add the plugin to the provider "+
				"block's trusted_exec, or the overrides to its trusted_connection_overrides, and run destroy again.")
		return
	}
	clusters := map[string]bool{}
	for _, c := range m.recorded.renderedClusters() {
		clusters[c] = true
	}
	for _, c := range prior.Applied {
		clusters[c] = true
	}
	t, d := timeoutsOf(ctx, req.State)
	resp.Diagnostics.Append(d...)
	timeout, d := t.Delete(ctx, r.data.RolloutTimeout)
	resp.Diagnostics.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := r.data.Engine.Delete(ctx, in.fleet.Members, in.template, sortedStrings(clusters), prior.Preserve)
	for ref, where := range mergeClusters(prior.Dependencies, m.recorded.dependencyClusters()) {
		for _, dep := range in.dependencies {
			if api.TemplateRefOf(dep).String() == ref && len(where) > 0 {
				res.Outcomes = append(res.Outcomes, r.data.Engine.Delete(ctx, in.fleet.Members, dep, where, prior.Preserve).Outcomes...)
			}
		}
	}
	if err := res.Err(); err != nil {
		resp.Diagnostics.AddError("Cannot remove "+api.TemplateRefOf(in.template).String()+" from every cluster",
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
		listed[api.TemplateRefOf(dep).String()] = true
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
