package terraform

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/render"
)

// quotaResource is flotilla_federated_resource_quota: Karmada's
// FederatedResourceQuota. Unlike the policies it touches clusters: each
// static assignment becomes a ResourceQuota in its member, the same object
// continuous mode's Work carries (render.QuotaResourceQuota), applied and
// removed through the engine's execution. flotilla_manifest takes the
// quota by value in federated_resource_quotas and plans against it.
type quotaResource struct {
	data *providerData
}

var (
	_ resource.ResourceWithConfigure      = (*quotaResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*quotaResource)(nil)
	_ resource.ResourceWithValidateConfig = (*quotaResource)(nil)
)

func newFederatedResourceQuotaResource() resource.Resource { return &quotaResource{} }

// Metadata names the resource type flotilla_federated_resource_quota.
func (r *quotaResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_federated_resource_quota"
}

// Configure receives what the provider configured.
func (r *quotaResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// Schema is Karmada's spec in snake_case, with name, namespace, kind and
// id, the write-only clusters, and what the plan shows per cluster.
func (r *quotaResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := specAttributes(quotaFields())
	attrs[attrName] = schema.StringAttribute{
		MarkdownDescription: "Name of the quota, a DNS-1123 label: each member's ResourceQuota has this name. Changing it replaces the resource.",
		Required:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	attrs[attrNamespace] = schema.StringAttribute{
		MarkdownDescription: "The namespace the quota limits, in every cluster. Changing it replaces the resource.",
		Required:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	attrs[attrKind] = schema.StringAttribute{
		MarkdownDescription: "The Karmada kind, always `" + api.KindFederatedResourceQuota + "`.",
		Computed:            true,
		Default:             stringdefault.StaticString(api.KindFederatedResourceQuota),
	}
	attrs[attrID] = schema.StringAttribute{
		MarkdownDescription: "Identifier of the quota: `namespace/name`. Known at plan time.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{policyIDModifier{kind: policyKind{namespaced: true}}},
	}
	attrs[attrClusters] = schema.DynamicAttribute{
		MarkdownDescription: "The member clusters: a list of `flotilla_cluster` resources that includes every cluster a " +
			"static assignment names (others are ignored). Write-only: the connections of the assigned clusters are " +
			"recorded in `connections` for refresh and destroy.",
		Optional:  true,
		Sensitive: true,
		WriteOnly: true,
	}
	attrs[attrRendered] = schema.MapAttribute{
		MarkdownDescription: "Cluster → the exact ResourceQuota applied there, as JSON: the one continuous mode's Work " +
			"carries for the same quota (the assignment's `hard`, flotilla's ownership labels and rendered hash). A refresh " +
			"drops a cluster whose ResourceQuota is gone, so the next plan applies it again.",
		ElementType: types.StringType,
		Computed:    true,
	}
	attrs[attrConnections] = schema.MapAttribute{
		MarkdownDescription: "Cluster → how flotilla reaches it, for each assigned cluster, as `flotilla_manifest` records them; " +
			"what refresh and destroy use.",
		ElementType: types.StringType,
		Computed:    true,
		Sensitive:   true,
	}
	resp.Schema = schema.Schema{Attributes: attrs, MarkdownDescription: "A Karmada FederatedResourceQuota " +
		"(policy.karmada.io/v1alpha1): one quota for a namespace across the fleet.\n\n" +
		"Each `static_assignments` entry becomes a ResourceQuota, named after this quota, in the namespace of its " +
		"cluster: `terraform plan` shows each one in `rendered`, exactly as continuous mode's Work would carry it, " +
		"`apply` creates or updates them with server-side apply (a ResourceQuota flotilla does not own is refused, never " +
		"taken over) and removes those of assignments that were dropped, and `destroy` removes them all.\n\n" +
		"`overall` limits what the namespace's templates may request in every cluster together. A `flotilla_manifest` " +
		"that lists this quota in `federated_resource_quotas` is refused at plan when its replicas would take the " +
		"namespace over `overall`, with the numbers, and dynamic division gives an assigned cluster no more replicas " +
		"than its assignment admits. A manifest sees only its own inputs, so several manifests are each weighed " +
		"against the whole `overall`; their sum is bounded by the members' ResourceQuotas (see the FederatedResourceQuota guide).\n\n" +
		"Attributes are Karmada's `spec` fields in snake_case; quantities are strings (`\"500m\"`, `\"4Gi\"`). The " +
		"configuration is validated with Karmada's rules (assignments within `overall`, clusters listed once) and each " +
		"problem names its attribute."}
}

// ValidateConfig runs Karmada's validation once the configuration is known.
func (r *quotaResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	_, _, d := decodeQuota(req.Config.Raw, path.Empty(), true)
	resp.Diagnostics.Append(d...)
}

// quotaPlan is what one plan or apply of a quota works from.
type quotaPlan struct {
	quota *api.FederatedResourceQuota
	// members are the configured clusters; nil when not known yet.
	members []engine.Member
	// objects are the ResourceQuotas by assigned cluster.
	objects map[string]*unstructured.Unstructured
	known   bool
}

// planQuota decodes the quota and the clusters from value (a plan, with
// config's write-only clusters) and renders each assignment.
func (r *quotaResource) planQuota(value, config tftypes.Value) (quotaPlan, diag.Diagnostics) {
	var out quotaPlan
	q, _, diags := decodeQuota(value, path.Empty(), false)
	if q == nil {
		return out, diags
	}
	out.quota = q
	var cfg map[string]tftypes.Value
	clusters := tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	if config.IsKnown() && !config.IsNull() && config.As(&cfg) == nil {
		clusters = cfg[attrClusters]
	}
	members, mknown, md := fleetDecoder.members(clusters)
	diags.Append(md...)
	if !mknown {
		return out, diags
	}
	out.members = members
	out.objects = map[string]*unstructured.Unstructured{}
	for i, a := range q.Spec.StaticAssignments {
		if !slices.ContainsFunc(members, func(m engine.Member) bool { return m.Cluster.Name == a.ClusterName }) {
			at := path.Root("static_assignments").AtListIndex(i).AtName("cluster_name")
			diags.AddAttributeError(at, "Assigned cluster not in clusters",
				fmt.Sprintf("%s: FederatedResourceQuota %s/%s assigns cluster %q, which is not in clusters: add flotilla_cluster.%s (or the resource that registers it) to clusters.",
					at, q.Namespace, q.Name, a.ClusterName, a.ClusterName))
			continue
		}
		w, _, err := render.QuotaResourceQuota(q, a.ClusterName, r.data.Engine.Fleet())
		if err != nil {
			diags.AddAttributeError(path.Root("static_assignments").AtListIndex(i), "Cannot render the ResourceQuota", err.Error())
			continue
		}
		out.objects[a.ClusterName] = w.Object
	}
	out.known = true
	return out, diags
}

// ModifyPlan shows, per assigned cluster, the ResourceQuota apply writes.
func (r *quotaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return
	}
	p, d := r.planQuota(req.Plan.Raw, req.Config.Raw)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	set := map[string]tftypes.Value{
		attrRendered:    tftypes.NewValue(renderedType, tftypes.UnknownValue),
		attrConnections: tftypes.NewValue(connectionsType, tftypes.UnknownValue),
	}
	if p.known {
		rendered, err := renderedValue(objectsJSON(p.objects))
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(attrRendered), "Cannot render the ResourceQuotas", err.Error())
			return
		}
		names := map[string]bool{}
		for c := range p.objects {
			names[c] = true
		}
		conns, err := connectionsValue(p.members, names, nil)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(attrConnections), "Cannot record the connections", err.Error())
			return
		}
		set[attrRendered], set[attrConnections] = rendered, conns
	}
	v, err := withAttributes(resp.Plan.Raw, set)
	if err != nil {
		resp.Diagnostics.AddError("Cannot record the plan", err.Error())
		return
	}
	resp.Plan.Raw = v
}

// Create applies the planned ResourceQuotas.
func (r *quotaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = r.apply(ctx, req.Plan.Raw, req.Config.Raw, tftypes.Value{}, &resp.Diagnostics)
}

// Update applies the planned ResourceQuotas and removes those of dropped
// assignments.
func (r *quotaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = r.apply(ctx, req.Plan.Raw, req.Config.Raw, req.State.Raw, &resp.Diagnostics)
}
