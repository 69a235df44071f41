package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
)

// quotaRecorded is what a quota's state says exists in the members.
type quotaRecorded struct {
	// objects are the recorded ResourceQuotas by cluster.
	objects map[string]*unstructured.Unstructured
	// connections is the recorded connections value.
	connections tftypes.Value
}

// recordedQuota reads rendered and connections from a state; a null state
// records nothing.
func recordedQuota(state tftypes.Value) (quotaRecorded, error) {
	rec := quotaRecorded{objects: map[string]*unstructured.Unstructured{}, connections: tftypes.NewValue(connectionsType, nil)}
	if !state.IsKnown() || state.IsNull() {
		return rec, nil
	}
	attrs, err := rawAttributes(state)
	if err != nil {
		return rec, err
	}
	rec.connections = attrs[attrConnections]
	elems, err := rawConnections(attrs[attrRendered])
	if err != nil {
		return rec, fmt.Errorf("rendered: %w", err)
	}
	for cluster, v := range elems {
		var obj map[string]any
		if err := json.Unmarshal([]byte(rawString(v)), &obj); err != nil {
			return rec, fmt.Errorf("rendered[%q]: %w", cluster, err)
		}
		rec.objects[cluster] = &unstructured.Unstructured{Object: obj}
	}
	return rec, nil
}

// objectsJSON is each cluster's object as rendered records it.
func objectsJSON(objects map[string]*unstructured.Unstructured) map[string]map[string]any {
	out := make(map[string]map[string]any, len(objects))
	for cluster, o := range objects {
		out[cluster] = o.Object
	}
	return out
}

// apply writes the planned ResourceQuotas, prunes the clusters prior
// recorded that no assignment names any more, and returns the state: what
// may now exist in each member, so nothing applied is forgotten even when
// a member fails.
func (r *quotaResource) apply(ctx context.Context, planned, config, prior tftypes.Value, diags *diag.Diagnostics) tftypes.Value {
	p, d := r.planQuota(planned, config)
	diags.Append(d...)
	rec, err := recordedQuota(prior)
	if err != nil {
		diags.AddError("Cannot read the recorded ResourceQuotas", err.Error())
	}
	if diags.HasError() {
		return prior
	}
	if !p.known {
		diags.AddAttributeError(path.Root(attrClusters), "Clusters not known at apply", "The connections of the assigned clusters are still unknown; this is a bug in the configuration's ordering.")
		return prior
	}
	recordedMembers, refused, err := membersFromConnections(rec.connections, r.data.Trusted)
	if err != nil {
		diags.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return prior
	}
	members := slices.Clone(p.members)
	for _, m := range recordedMembers {
		if !slices.ContainsFunc(members, func(c engine.Member) bool { return c.Cluster.Name == m.Cluster.Name }) {
			members = append(members, m)
		}
	}
	ref := quotaTemplateRef(p.quota)
	req := execution.ApplyRequest{Template: ref, Objects: p.objects, ConflictResolution: api.ConflictAbort}
	for cluster := range rec.objects {
		if _, assigned := p.objects[cluster]; !assigned {
			if err, ok := refused[cluster]; ok {
				diags.AddAttributeError(path.Root(attrConnections), "Cannot remove the ResourceQuota of "+ref.String()+" from cluster "+cluster, err.Error())
				continue
			}
			req.Prune = append(req.Prune, cluster)
		}
	}
	slices.Sort(req.Prune)
	res := r.data.Engine.ApplyRendered(ctx, members, req)

	// What may exist now: every planned cluster but a refused conflict,
	// and each pruned cluster whose removal failed.
	keep := map[string]*unstructured.Unstructured{}
	for cluster, obj := range p.objects {
		if o, ok := res.Find(cluster, ref); !ok || o.Action != execution.ActionSkipped {
			keep[cluster] = obj
		}
	}
	for cluster, obj := range rec.objects {
		_, assigned := p.objects[cluster]
		o, ok := res.Find(cluster, ref)
		if !assigned && (!slices.Contains(req.Prune, cluster) || !ok || o.Action == execution.ActionFailed) {
			keep[cluster] = obj
		}
	}
	if err := res.Err(); err != nil {
		diags.AddError("Cannot apply the ResourceQuotas of FederatedResourceQuota "+p.quota.Namespace+"/"+p.quota.Name,
			outcomeSummary(engine.Applied{Outcomes: res.Outcomes})+"\n\nThe state records every cluster where a ResourceQuota may now exist; apply again once the clusters answer.")
	}
	return r.quotaState(planned, keep, members, rec.connections, diags)
}

// quotaState is value with rendered and connections set for objects and
// the write-only clusters null.
func (r *quotaResource) quotaState(value tftypes.Value, objects map[string]*unstructured.Unstructured, members []engine.Member, prior tftypes.Value, diags *diag.Diagnostics) tftypes.Value {
	rendered, err := renderedValue(objectsJSON(objects))
	if err != nil {
		diags.AddAttributeError(path.Root(attrRendered), "Cannot record the ResourceQuotas", err.Error())
		return value
	}
	names := map[string]bool{}
	for c := range objects {
		names[c] = true
	}
	priorConns, _ := rawConnections(prior)
	conns, err := connectionsValue(members, names, priorConns)
	if err != nil {
		diags.AddAttributeError(path.Root(attrConnections), "Cannot record the connections", err.Error())
		return value
	}
	out, err := withAttributes(value, map[string]tftypes.Value{
		attrRendered: rendered, attrConnections: conns, attrClusters: tftypes.NewValue(tftypes.DynamicPseudoType, nil),
	})
	if err != nil {
		diags.AddError("Cannot record the state", err.Error())
		return value
	}
	return out
}

// quotaTemplateRef identifies the members' ResourceQuota of q, as
// execution and ownership labels name it.
func quotaTemplateRef(q *api.FederatedResourceQuota) api.TemplateRef {
	return api.TemplateRef{Version: "v1", Kind: "ResourceQuota", Namespace: q.Namespace, Name: q.Name}
}

// Read drops from rendered each cluster whose ResourceQuota is gone (the
// next plan applies it again) and records the live hard limits of the
// others, so an edit in a member shows as drift. A member that cannot be
// read keeps its last known value, with a warning.
func (r *quotaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.data == nil {
		return
	}
	rec, err := recordedQuota(req.State.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the recorded ResourceQuotas", err.Error())
		return
	}
	members, refused, err := membersFromConnections(rec.connections, r.data.Trusted)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return
	}
	reachable := map[string]*unstructured.Unstructured{}
	for cluster, obj := range rec.objects {
		if _, no := refused[cluster]; !no {
			reachable[cluster] = obj
		}
	}
	observed := map[string]*unstructured.Unstructured{}
	for cluster, obj := range rec.objects {
		observed[cluster] = obj
	}
	for _, o := range r.data.Engine.Observe(ctx, members, reachable) {
		switch {
		case o.Err != nil:
			resp.Diagnostics.AddAttributeWarning(path.Root(attrRendered), "Cannot read "+o.Object.String()+" from cluster "+o.Cluster,
				"The last known state is kept: "+o.Err.Error())
		case o.NotFound || o.Live == nil:
			delete(observed, o.Cluster)
		default:
			obj := rec.objects[o.Cluster].DeepCopy()
			if hard, found, _ := unstructured.NestedMap(o.Live.Object, "spec", "hard"); found {
				_ = unstructured.SetNestedMap(obj.Object, hard, "spec", "hard")
			}
			observed[o.Cluster] = obj
		}
	}
	resp.State.Raw = r.quotaState(req.State.Raw, observed, members, rec.connections, &resp.Diagnostics)
}

// Delete removes the ResourceQuotas from every recorded cluster.
func (r *quotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	q, _, d := decodeQuota(req.State.Raw, path.Empty(), false)
	resp.Diagnostics.Append(d...)
	rec, err := recordedQuota(req.State.Raw)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the recorded ResourceQuotas", err.Error())
	}
	if resp.Diagnostics.HasError() || q == nil {
		return
	}
	members, refused, err := membersFromConnections(rec.connections, r.data.Trusted)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot read the recorded connections", err.Error())
		return
	}
	ref := quotaTemplateRef(q)
	if len(refused) > 0 {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot remove the ResourceQuotas of "+ref.String()+": a recorded connection is not trusted",
			refusedSummary(refused)+"\n\nNothing was deleted and the resource stays in state.")
		return
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetAPIVersion("v1")
	tmpl.SetKind("ResourceQuota")
	tmpl.SetNamespace(q.Namespace)
	tmpl.SetName(q.Name)
	res := r.data.Engine.Delete(ctx, members, tmpl, sortedKeys(rec.objects), false)
	if err := res.Err(); err != nil {
		resp.Diagnostics.AddError("Cannot remove the ResourceQuotas of FederatedResourceQuota "+q.Namespace+"/"+q.Name+" from every cluster",
			outcomeSummary(engine.Applied{Outcomes: res.Outcomes})+"\n\nThe resource stays in state; run destroy again once the clusters answer.")
	}
}
