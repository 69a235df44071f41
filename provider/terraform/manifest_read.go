package terraform

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Read refreshes rendered from the members: a cluster whose object is gone
// drops out, and a cluster whose managed fields differ from what was
// applied shows what runs there, so the next plan shows the drift and apply
// restores it. Fields flotilla does not manage (server defaults, fields
// other controllers own) are ignored. An unreachable member keeps its last
// known value, with a warning.
func (r *manifestResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m manifestModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || r.data == nil || m.Clusters.IsNull() {
		return // imported: nothing to read until the next apply records the clusters
	}
	in, d := expandManifest(ctx, &m)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() || in.template == nil {
		return
	}
	objects, err := renderedObjects(ctx, m.Rendered)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("rendered"), "Cannot read the recorded objects", err.Error())
		return
	}
	if len(objects) == 0 {
		return
	}
	observed := map[string]any{}
	var items []health.ClusterStatus
	for _, o := range r.data.Engine.Observe(ctx, in.fleet.Members, objects) {
		desired := objects[o.Cluster].Object
		switch {
		case o.Err != nil:
			resp.Diagnostics.AddAttributeWarning(path.Root("rendered"), "Cannot read "+o.Object.String()+" from cluster "+o.Cluster,
				"The last known state is kept: "+o.Err.Error())
			observed[o.Cluster] = desired
		case o.NotFound:
			// Gone: leaving it out makes the next plan put it back.
		case !o.Owned:
			resp.Diagnostics.AddAttributeWarning(path.Root("rendered"), o.Object.String()+" in cluster "+o.Cluster+" is no longer flotilla's",
				"Its ownership labels were removed or changed; the next apply takes it back only if the policy's conflict_resolution is Overwrite.")
			observed[o.Cluster] = o.Managed.Object
		case render.Equivalent(desired, o.Managed.Object):
			observed[o.Cluster] = desired
			items = append(items, health.Observe(o.Cluster, o.Live, 0))
		default:
			observed[o.Cluster] = o.Managed.Object
			items = append(items, health.Observe(o.Cluster, o.Live, 0))
		}
	}
	v, err := valueFromJSON(observed)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("rendered"), "Cannot record the observed objects", err.Error())
		return
	}
	rendered := types.DynamicValue(v)
	if !rendered.Equal(m.Rendered) {
		m.Rendered = rendered
	}
	if len(items) > 0 {
		m.Status = statusValue(health.Aggregate(in.template, items), &resp.Diagnostics)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
