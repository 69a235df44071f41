package terraform

import (
	"context"
	"errors"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/plan"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/scheduler"
)

type placementDataSource struct {
	data *providerData
}

var (
	_ datasource.DataSource              = (*placementDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*placementDataSource)(nil)
)

func newPlacementDataSource() datasource.DataSource { return &placementDataSource{} }

type placementModel struct {
	Manifest            types.Dynamic `tfsdk:"manifest"`
	Clusters            types.Dynamic `tfsdk:"clusters"`
	PropagationPolicies types.Dynamic `tfsdk:"propagation_policies"`
	OverridePolicies    types.Dynamic `tfsdk:"override_policies"`
	// ResourceInterpreters are the customizations, as for flotilla_manifest.
	ResourceInterpreters types.Dynamic `tfsdk:"resource_interpreters"`
	// Quotas are the namespace's FederatedResourceQuotas, as for flotilla_manifest.
	Quotas       types.Dynamic `tfsdk:"federated_resource_quotas"`
	Placement    types.Map     `tfsdk:"placement"`
	Rendered     types.Dynamic `tfsdk:"rendered"`
	Policy       types.String  `tfsdk:"policy"`
	AffinityTerm types.String  `tfsdk:"affinity_term"`
	Schedulable  types.Bool    `tfsdk:"schedulable"`
	Error        types.String  `tfsdk:"error"`
	Reasons      types.Map     `tfsdk:"reasons"`
}

// Metadata implements the framework interface: it returns the type name.
func (d *placementDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_placement"
}

// Configure implements the framework interface: it receives what the provider configured.
func (d *placementDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// Schema implements the framework interface: it returns the schema.
func (d *placementDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Previews where a template would go and what each cluster would receive, without applying anything: " +
			"the same planning step `flotilla_manifest` runs. Unlike the resource, a template that cannot be placed is not an " +
			"error here: `schedulable` is false and `error` and `reasons` say why, so \"why not cluster X\" can be answered in Terraform. " +
			"For dynamic weights and `Aggregated`, a member it reads is also estimated node by node (requests, node selector and " +
			"affinity, tolerations, free pod slots per node), so the preview shows what its nodes can really start; " +
			"`flotilla_manifest` plans with the cluster-wide estimate, which its apply can reproduce.",
		Attributes: map[string]schema.Attribute{
			"manifest": schema.DynamicAttribute{
				MarkdownDescription: "The resource template, as for `flotilla_manifest`. Sensitive, as there.",
				Required:            true,
				Sensitive:           true,
			},
			"clusters": schema.DynamicAttribute{
				MarkdownDescription: "The member clusters: a list of `flotilla_cluster` resources. Members whose connection is known are probed for live status (readiness, API enablements, capacity). " +
					"They carry their connections, so the state records `clusters` as null: a data source is read again on every plan and needs nothing later.",
				Required:  true,
				Sensitive: true,
			},
			"propagation_policies": schema.DynamicAttribute{
				MarkdownDescription: "Candidate propagation policies, as for `flotilla_manifest`.",
				Optional:            true,
			},
			"override_policies": schema.DynamicAttribute{
				MarkdownDescription: "Candidate override policies, as for `flotilla_manifest`.",
				Optional:            true,
			},
			"resource_interpreters": schema.DynamicAttribute{
				MarkdownDescription: "Resource interpreter customizations (`flotilla_resource_interpreter` resources), as for `flotilla_manifest`: " +
					"a custom kind's replicas are divided with their scripts.",
				Optional: true,
			},
			attrQuotas: schema.DynamicAttribute{
				MarkdownDescription: "FederatedResourceQuotas of the template's namespace (`flotilla_federated_resource_quota` resources), as for " +
					"`flotilla_manifest`: each cluster's share is capped by its static assignment, and a placement that would take the " +
					"namespace over `overall` is not schedulable, with the numbers in `error`.",
				Optional: true,
			},
			"placement": schema.MapAttribute{
				MarkdownDescription: "Cluster → replicas.",
				ElementType:         types.Int64Type,
				Computed:            true,
			},
			"rendered": schema.DynamicAttribute{
				MarkdownDescription: "Cluster → the object that cluster would receive; a Secret's data values (and those of the provider's `sensitive_kinds`) are shown as `(sensitive value)`: a data source has no private state to keep a key for `flotilla_manifest`'s tags in.",
				Computed:            true,
			},
			"policy": schema.StringAttribute{
				MarkdownDescription: "The claiming propagation policy, e.g. `PropagationPolicy default/web`; null when none claims the template.",
				Computed:            true,
			},
			"affinity_term": schema.StringAttribute{
				MarkdownDescription: "The chosen `cluster_affinities` term, if any.",
				Computed:            true,
			},
			"schedulable": schema.BoolAttribute{
				MarkdownDescription: "Whether the template can be placed.",
				Computed:            true,
			},
			"error": schema.StringAttribute{
				MarkdownDescription: "Why the template cannot be placed; empty when it can.",
				Computed:            true,
			},
			"reasons": schema.MapAttribute{
				MarkdownDescription: "Cluster → why it was not chosen, or, for a chosen cluster whose nodes hold fewer replicas " +
					"than its cluster-wide free resources would allow, both figures (`per-node fit: room for 3; cluster-wide free would allow 6`).",
				ElementType: types.StringType,
				Computed:    true,
			},
		},
	}
}

func (d *placementDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m placementModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || d.data == nil {
		return
	}
	decoded, diags := decodeManifest(req.Config.Raw, tftypes.Value{}, tftypes.Value{})
	in := decoded.in
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if _, diags := decideScope(ctx, d.data.Engine, &in); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	// A preview that nothing applies: the per-node estimate of the members
	// read now may show what will really start.
	in.fleet.PerNode = true
	results, unreachable := d.data.Engine.Plan(ctx, in.fleet, []*unstructured.Unstructured{in.template}, nil)
	for _, name := range sortedKeys(unreachable) {
		resp.Diagnostics.AddAttributeWarning(path.Root("clusters"), "Cluster "+name+" is not reachable",
			"It is planned as unreachable: "+unreachable[name].Error())
	}
	res := results[0]
	m.Policy, m.AffinityTerm = types.StringNull(), types.StringNull()
	if res.Policy != nil {
		m.Policy = types.StringValue(res.Policy.String())
	}
	if res.AffinityTerm != "" {
		m.AffinityTerm = types.StringValue(res.AffinityTerm)
	}
	m.Schedulable = types.BoolValue(res.Err == nil)
	m.Error = types.StringValue("")
	if res.Err != nil {
		var fit *scheduler.FitError
		var quota *plan.QuotaError
		if !errors.As(res.Err, &fit) && !errors.As(res.Err, &quota) {
			// Not a placement question: a bad template or override is an error.
			resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot plan "+res.Template.Describe(), res.Err.Error())
			return
		}
		m.Error = types.StringValue(res.Err.Error())
	}
	why := map[string]string{}
	maps.Copy(why, res.Reasons)
	for _, l := range res.NodeLimited {
		why[l.Cluster] = l.String()
	}
	reasons, d2 := types.MapValueFrom(ctx, types.StringType, why)
	resp.Diagnostics.Append(d2...)
	m.Reasons = reasons
	m.Placement = flattenPlacement(res)
	rendered, err := flattenRendered(res.Works, d.data.SensitiveKinds)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("manifest"), "Cannot show the rendered objects", err.Error())
		return
	}
	m.Rendered = rendered
	// The clusters carry their connections: used, and not kept in state.
	m.Clusters = types.DynamicNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
