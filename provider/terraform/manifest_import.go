package terraform

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/execution"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/health"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// manifestImportIDForm is the form of flotilla_manifest's import ID.
const manifestImportIDForm = "TEMPLATE_ID[;cluster=NAME,KUBECONFIG_PATH[,CONTEXT]]...[;policy=POLICY]"

// Import and the Read that follows get no configuration, and the fleet is
// passed by value: the template's identity alone says nothing about where it
// runs or how to reach it. So the import ID may name, as flotilla_cluster's
// does, each member's kubeconfig connection, and the claiming policy (which
// members cannot tell). Read then reads the object back from every named
// member and fills what the state after an apply holds: manifest (the
// template, as the first member holding it runs it, without flotilla's
// ownership metadata), connections, placement, rendered and status. A bare
// TEMPLATE_ID records the identity, with placement and rendered empty,
// until the next apply.

// manifestImportID is a parsed import ID.
type manifestImportID struct {
	template *unstructured.Unstructured
	// members are the named clusters, in ID order, each with its kubeconfig connection.
	members []engine.Member
	policy  string
}

// parseManifestImportID reads an import ID of manifestImportIDForm.
func parseManifestImportID(id string) (manifestImportID, error) {
	parts := strings.Split(id, ";")
	tmpl, err := templateFromImportID(strings.TrimSpace(parts[0]))
	if err != nil {
		return manifestImportID{}, err
	}
	out := manifestImportID{template: tmpl}
	seen := map[string]bool{}
	for _, part := range parts[1:] {
		key, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch key {
		case "cluster":
			f := strings.Split(value, ",")
			if len(f) < 2 || len(f) > 3 || f[0] == "" || f[1] == "" || (len(f) == 3 && f[2] == "") {
				return manifestImportID{}, fmt.Errorf("%q: want cluster=NAME,KUBECONFIG_PATH[,CONTEXT]", part)
			}
			if seen[f[0]] {
				return manifestImportID{}, fmt.Errorf("cluster %s is named twice", f[0])
			}
			seen[f[0]] = true
			conn := &member.Connection{KubeconfigPath: f[1]}
			if len(f) == 3 {
				conn.Context = f[2]
			}
			m := engine.Member{Connection: conn}
			m.Cluster.Name = f[0]
			out.members = append(out.members, m)
		case "policy":
			if value == "" || out.policy != "" {
				return manifestImportID{}, fmt.Errorf("%q: want one policy=POLICY, as the policy attribute shows it, e.g. policy=PropagationPolicy default/web", part)
			}
			out.policy = value
		default:
			return manifestImportID{}, fmt.Errorf("%q: want cluster=NAME,KUBECONFIG_PATH[,CONTEXT] or policy=POLICY", part)
		}
	}
	return out, nil
}

// ImportState reads an import ID (template, clusters, policy) into the state; Read then fills the
// computed attributes from the members.
func (r *manifestResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, err := parseManifestImportID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("Expected %s, for example "+
			"'apps/v1, Kind=Deployment, default/web;cluster=east,~/.kube/config,east;policy=PropagationPolicy default/web': %v", manifestImportIDForm, err))
		return
	}
	v, err := valueFromJSON(id.template.Object)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	names := map[string]bool{}
	for _, m := range id.members {
		names[m.Cluster.Name] = true
	}
	conns, err := connectionsValue(id.members, names, nil)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	connections, d := stringMapFromRaw(ctx, conns)
	resp.Diagnostics.Append(d...)
	policy := types.StringNull()
	if id.policy != "" {
		policy = types.StringValue(id.policy)
	}
	empty := types.MapValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), types.StringValue(api.TemplateRefOf(id.template).String()))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("manifest"), types.DynamicValue(v))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("wait_for_rollout"), types.BoolValue(true))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrConnections), connections)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrPolicy), policy)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrPlacement), types.MapValueMust(types.Int64Type, nil))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrRendered), empty)...)
	resp.Diagnostics.Append(writePrivate(ctx, resp.Private, manifestPrivate{Importing: true})...)
}

// stringMapFromRaw is a map of strings from its raw value.
func stringMapFromRaw(ctx context.Context, v tftypes.Value) (types.Map, diag.Diagnostics) {
	val, err := types.MapType{ElemType: types.StringType}.ValueFromTerraform(ctx, v)
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Cannot record the connections", err.Error())
		return types.MapNull(types.StringType), d
	}
	return val.(types.Map), nil
}

// readImported is Read right after ImportState: it reads the template's
// object from every member the import ID named and fills the state as an
// apply would have left it. A member that does not hold the object (or
// holds one this fleet does not own) is left out; one that cannot be read
// fails the import, as a partial state would show a plan that does not hold.
func (r *manifestResource) readImported(ctx context.Context, in manifestInputs, members []engine.Member, key []byte, resp *resource.ReadResponse) {
	identity := map[string]*unstructured.Unstructured{}
	for _, m := range members {
		identity[m.Cluster.Name] = in.template
	}
	found := map[string]map[string]any{}
	placement := map[string]int64{}
	var items []health.ClusterStatus
	var first *unstructured.Unstructured
	var karmada *execution.KarmadaAdoption
	for _, o := range r.data.Engine.Observe(ctx, members, identity) {
		managed := o.Managed
		switch {
		case o.Err != nil:
			resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot import "+o.Object.String()+" from cluster "+o.Cluster, o.Err.Error())
			continue
		case o.NotFound:
			continue
		case !o.Owned && o.Live != nil && grantKarmada(&karmada, o.Cluster, o.Live):
			// Karmada's object: imported as its template declared it,
			// and taken over by the next apply (manifest_import_karmada.go).
			managed = karmadaView(o.Live)
		case !o.Owned || o.Managed == nil:
			resp.Diagnostics.AddWarning(o.Object.String()+" in cluster "+o.Cluster+" is not this fleet's",
				"It does not carry fleet "+r.data.Engine.Fleet()+"'s ownership labels for this template, nor was it applied by Karmada for the binding of the other clusters' objects, so it is not imported; "+
					"the next apply takes it over only if the claiming policy's conflict_resolution is Overwrite.")
			continue
		}
		found[o.Cluster] = r.data.SensitiveKinds.redact(managed.Object, key)
		replicas, _, err := interpret.GetReplicas(managed)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(attrPlacement), "Cannot import "+o.Object.String()+" from cluster "+o.Cluster, err.Error())
			continue
		}
		placement[o.Cluster] = int64(replicas)
		items = append(items, health.Observe(o.Cluster, o.Live, 0))
		if first == nil { // observations come by cluster name: the first one's
			first = templateOf(managed)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	set := map[string]tftypes.Value{}
	names := map[string]bool{}
	for cluster := range found {
		names[cluster] = true
	}
	var err error
	if set[attrConnections], err = connectionsValue(members, names, nil); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot record the connections", err.Error())
		return
	}
	set[attrPlacement] = placementValue(placement)
	if set[attrRendered], err = renderedValue(found); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(attrRendered), "Cannot record the rendered objects", err.Error())
		return
	}
	tmpl := in.template
	if first != nil {
		tmpl = first
		if set[attrManifest], err = rawFromJSON(tmpl.Object); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(attrManifest), "Cannot record the imported template", err.Error())
			return
		}
	}
	if set[attrStatus], err = rawFromJSON(statusJSON(health.Aggregate(tmpl, items))); err != nil {
		resp.Diagnostics.AddError("Cannot record the status", err.Error())
		return
	}
	v, err := withAttributes(resp.State.Raw, set)
	if err != nil {
		resp.Diagnostics.AddError("Cannot record the imported state", err.Error())
		return
	}
	resp.State.Raw = v
	resp.Diagnostics.Append(writePrivate(ctx, resp.Private, manifestPrivate{Applied: sortedStrings(names), Karmada: karmada})...)
}

// templateOf is the template an object flotilla applied was rendered from,
// as far as the object tells: the object without flotilla's ownership
// labels and annotations. Overrides and a divided replica count are part of
// the object and stay in it.
func templateOf(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.SetLabels(withoutKeys(out.GetLabels(), render.LabelManagedBy, render.LabelFleet, render.LabelTemplateID))
	out.SetAnnotations(withoutKeys(out.GetAnnotations(), render.AnnotationTemplate, render.AnnotationRenderedHash))
	return out
}

// withoutKeys is m without keys; nil when nothing is left, so an empty
// labels or annotations map is dropped as the template had none.
func withoutKeys(m map[string]string, keys ...string) map[string]string {
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
