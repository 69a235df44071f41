package terraform

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// Read refreshes rendered from the members: a cluster whose object is gone
// drops out, and a cluster whose managed fields differ from what was
// applied shows what runs there, so the next plan shows the drift and apply
// restores it. Fields flotilla does not manage (server defaults, fields
// other controllers own) are ignored. An unreachable member keeps its last
// known value, with a warning.
func (r *manifestResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.data == nil || req.State.Raw.IsNull() {
		return
	}
	m, d := decodeManifest(tftypes.Value{}, tftypes.Value{}, req.State.Raw)
	if m.hasState && m.recorded.connections.IsNull() {
		return // imported by an older version: nothing to read until the next apply records the connections
	}
	resp.Diagnostics.Append(d...)
	in, refused, ok := r.recordedInputs(m, &resp.Diagnostics)
	if !ok {
		return
	}
	prior, d := readPrivate(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	// A state without a key (just created, or written before values were
	// tagged with one) gets one here, and the objects read back record
	// their tags: the plan that follows shows no change for it.
	key, d := sensitiveKeyOrNew(ctx, req.Private, resp.Private)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if in.fleet.Interpreter == nil && len(prior.Interpreters) > 0 {
		// resource_interpreters is write-only: refresh uses the ones the
		// last apply recorded. They compiled then; a refusal now means the
		// sandbox changed, and the built-in rules are not a fallback.
		var err error
		if in.fleet.Interpreter, err = interpret.New(prior.Interpreters); err != nil {
			resp.Diagnostics.AddAttributeWarning(path.Root(attrStatus), "Cannot use the recorded resource interpreters", err.Error())
		}
	}
	if prior.Importing {
		r.readImported(ctx, in, in.fleet.Members, key, resp)
		return
	}
	objects, err := renderedFromRaw(m.recorded.rendered, "rendered")
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("rendered"), "Cannot read the recorded objects", err.Error())
		return
	}
	prior.Facts = r.recordMemberFacts(ctx, in.fleet.Members, in.fleet.Interpreter, append([]*unstructured.Unstructured{in.template}, in.dependencies...))
	resp.Diagnostics.Append(writePrivate(ctx, resp.Private, prior)...)
	if objects == nil {
		objects = map[string]*unstructured.Unstructured{}
	}
	addPendingPrunes(objects, in.template, prior.Applied)
	objects, held := withoutSuspended(objects, m.recorded.suspended)
	set := map[string]tftypes.Value{}
	observed, items := r.observe(ctx, in, refused, objects, key, path.Root("rendered"), &resp.Diagnostics)
	for cluster, obj := range held {
		observed[cluster] = obj
	}
	if v, err := renderedValue(observed); err == nil && !v.Equal(m.recorded.rendered) {
		set[attrRendered] = v
	}
	if len(items) > 0 {
		agg, err := health.AggregateWith(in.fleet.Interpreter, in.template, items)
		if err != nil {
			resp.Diagnostics.AddAttributeWarning(path.Root(attrStatus), "Cannot aggregate the status of "+objectName(in.template), err.Error())
		}
		if v, err := rawFromJSON(statusJSON(agg)); err != nil {
			resp.Diagnostics.AddError("Cannot record the status", err.Error())
		} else if !v.Equal(m.recorded.status) {
			set[attrStatus] = v
		}
	}
	deps, err := renderedListFromRaw(m.recorded.dependenciesRendered)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("dependencies_rendered"), "Cannot read the recorded objects", err.Error())
		return
	}
	if len(deps) > 0 {
		list := make([]map[string]map[string]any, len(deps))
		for i, objects := range deps {
			if i < len(in.dependencies) && objects != nil {
				addPendingPrunes(objects, in.dependencies[i], prior.Dependencies[api.TemplateRefOf(in.dependencies[i]).String()])
			}
			list[i], _ = r.observe(ctx, in, refused, objects, key, path.Root("dependencies_rendered").AtListIndex(i), &resp.Diagnostics)
		}
		if v, err := renderedListValue(list); err == nil && !v.Equal(m.recorded.dependenciesRendered) {
			set[attrDependenciesRendered] = v
		}
	}
	if len(set) == 0 {
		return // the state stands as it is
	}
	v, err := withAttributes(req.State.Raw, set)
	if err != nil {
		resp.Diagnostics.AddError("Cannot record the refreshed state", err.Error())
		return
	}
	resp.State.Raw = v
}

// recordedInputs is the state's inputs with the members reached through
// the recorded connections, for refresh and destroy, which get no
// configuration; refused lists the connections trust does not allow. ok
// is false when there is nothing to act on, or an error.
func (r *manifestResource) recordedInputs(m manifestRequest, diags *diag.Diagnostics) (in manifestInputs, refused map[string]error, ok bool) {
	in = m.in
	diags.Append(unsettledScope(in)...)
	if diags.HasError() || in.template == nil {
		return in, nil, false
	}
	var err error
	if in.fleet.Members, refused, err = membersFromConnections(m.recorded.connections, r.data.Trusted); err != nil {
		diags.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return in, nil, false
	}
	return in, refused, true
}

// observe reads objects back from their clusters and returns, per cluster,
// what to record (see Read) and the health of each object found. Clusters
// whose recorded connection is refused keep their last known value. What
// is recorded has a sensitive kind's data tagged under key, as the plan does.
func (r *manifestResource) observe(ctx context.Context, in manifestInputs, refused map[string]error, objects map[string]*unstructured.Unstructured, key []byte, at path.Path, diags *diag.Diagnostics) (map[string]map[string]any, []health.ClusterStatus) {
	observed := map[string]map[string]any{}
	var items []health.ClusterStatus
	reachable := make(map[string]*unstructured.Unstructured, len(objects))
	for cluster, obj := range objects {
		if err, ok := refused[cluster]; ok {
			diags.AddAttributeWarning(path.Root("connections"), "Cannot refresh "+api.TemplateRefOf(obj).String()+" in cluster "+cluster,
				err.Error()+"\n\nThe last known state is kept. Plan and apply use the configuration's connection.")
			observed[cluster] = obj.Object
			continue
		}
		reachable[cluster] = obj
	}
	if len(reachable) == 0 {
		return observed, nil
	}
	for _, o := range r.data.Engine.Observe(ctx, in.fleet.Members, reachable) {
		desired := objects[o.Cluster].Object
		switch {
		case o.Err != nil:
			diags.AddAttributeWarning(at, "Cannot read "+o.Object.String()+" from cluster "+o.Cluster,
				"The last known state is kept: "+o.Err.Error())
			observed[o.Cluster] = desired
		case o.NotFound:
			// Gone: leaving it out makes the next plan put it back.
		case !o.Owned || o.Managed == nil:
			diags.AddAttributeWarning(at, o.Object.String()+" in cluster "+o.Cluster+" is no longer flotilla's",
				"Its ownership labels were removed or changed; the next apply takes it back only if the policy's conflict_resolution is Overwrite.")
			observed[o.Cluster] = map[string]any{}
		default:
			shown := r.data.SensitiveKinds.redact(withStringData(desired, asDeclared(objects[o.Cluster], o), liveObject(o.Live)), key)
			retagged := r.data.SensitiveKinds.withTagsOf(desired, shown)
			switch {
			case render.Equivalent(desired, shown):
				observed[o.Cluster] = desired
			case render.Equivalent(retagged, shown):
				observed[o.Cluster] = retagged
			default:
				observed[o.Cluster] = shown
			}
			items = append(items, observeWith(in.fleet.Interpreter, o.Cluster, o.Live))
		}
	}
	return observed, items
}

// addPendingPrunes adds to objects, by its identity alone, every cluster an
// earlier apply left the template in that is no longer placed: a prune that
// failed (the cluster was down). Reading them back puts what still runs
// there into state, so the next plan shows its removal even when nothing
// else changed.
func addPendingPrunes(objects map[string]*unstructured.Unstructured, tmpl *unstructured.Unstructured, applied []string) {
	for _, cluster := range applied {
		if _, placed := objects[cluster]; placed {
			continue
		}
		id := &unstructured.Unstructured{Object: map[string]any{}}
		id.SetAPIVersion(tmpl.GetAPIVersion())
		id.SetKind(tmpl.GetKind())
		id.SetNamespace(tmpl.GetNamespace())
		id.SetName(tmpl.GetName())
		objects[cluster] = id
	}
}

// asDeclared is the managed view of an observation with the fields its
// member owns (the retain-replicas label: spec.replicas) read as recorded,
// so an HPA scaling the workload is not drift and the plan proposes no
// replica change apply would not make.
func asDeclared(recorded *unstructured.Unstructured, o execution.Observation) map[string]any {
	return execution.AsDeclared(recorded, o.Managed, o.Live).Object
}

// liveObject is a live object's content; nil reads as none.
func liveObject(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}

// observeWith is health.ObserveWith for refresh: a member whose customized
// status reflection fails is Unknown, with the error as its message.
func observeWith(in *interpret.Interpreter, cluster string, live *unstructured.Unstructured) health.ClusterStatus {
	cs, err := health.ObserveWith(in, cluster, live, 0)
	if err != nil {
		cs.Health, cs.Message = health.Unknown, err.Error()
	}
	return cs
}
