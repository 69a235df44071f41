package terraform

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// clusterStatusDataSource is flotilla_cluster_status: the live status of a
// member, as Karmada's cluster status controller collects it. It is a data
// source so that volatile facts never sit on flotilla_cluster, which other
// resources reference.
type clusterStatusDataSource struct {
	data *providerData
}

var (
	_ datasource.DataSourceWithConfigure      = (*clusterStatusDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*clusterStatusDataSource)(nil)
)

func newClusterStatusDataSource() datasource.DataSource { return &clusterStatusDataSource{} }

// clusterStatusModel is flotilla_cluster_status's value.
type clusterStatusModel struct {
	Name types.String `tfsdk:"name"`
	connectionModel
	Ready             types.Bool   `tfsdk:"ready"`
	Conditions        types.List   `tfsdk:"conditions"`
	KubernetesVersion types.String `tfsdk:"kubernetes_version"`
	APIEnablements    types.List   `tfsdk:"api_enablements"`
	NodeSummary       types.Object `tfsdk:"node_summary"`
	ResourceSummary   types.Object `tfsdk:"resource_summary"`
}

type conditionModel struct {
	Type    string `tfsdk:"type"`
	Status  string `tfsdk:"status"`
	Reason  string `tfsdk:"reason"`
	Message string `tfsdk:"message"`
}

type apiEnablementModel struct {
	GroupVersion string             `tfsdk:"group_version"`
	Resources    []apiResourceModel `tfsdk:"resources"`
}

type apiResourceModel struct {
	Name string `tfsdk:"name"`
	Kind string `tfsdk:"kind"`
}

type nodeSummaryModel struct {
	TotalNum int64 `tfsdk:"total_num"`
	ReadyNum int64 `tfsdk:"ready_num"`
}

type resourceSummaryModel struct {
	Allocatable map[string]string `tfsdk:"allocatable"`
	Allocated   map[string]string `tfsdk:"allocated"`
	Allocating  map[string]string `tfsdk:"allocating"`
}

var (
	conditionObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"type": types.StringType, "status": types.StringType, "reason": types.StringType, "message": types.StringType,
	}}
	apiResourceObjectType   = types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "kind": types.StringType}}
	apiEnablementObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"group_version": types.StringType, "resources": types.ListType{ElemType: apiResourceObjectType},
	}}
	nodeSummaryObjectType     = types.ObjectType{AttrTypes: map[string]attr.Type{"total_num": types.Int64Type, "ready_num": types.Int64Type}}
	resourceSummaryObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"allocatable": types.MapType{ElemType: types.StringType},
		"allocated":   types.MapType{ElemType: types.StringType},
		"allocating":  types.MapType{ElemType: types.StringType},
	}}
)

// Metadata implements the framework interface: it returns the type name.
func (d *clusterStatusDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_status"
}

// Schema implements the framework interface: it returns the schema.
func (d *clusterStatusDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	quantities := func(what string) schema.MapAttribute {
		return schema.MapAttribute{
			MarkdownDescription: what + ", by resource name (`cpu`, `memory`, `pods`, …), as Kubernetes quantities.",
			ElementType:         types.StringType, Computed: true,
		}
	}
	attrs := map[string]schema.Attribute{
		clusterAttrName: schema.StringAttribute{
			MarkdownDescription: clusterNameDescription + " Here it only names the cluster in messages.",
			Required:            true,
		},
		"ready": schema.BoolAttribute{
			MarkdownDescription: "Whether the apiserver answered its readiness check. An unreachable cluster is not an " +
				"error: `ready` is `false` and the `Ready` condition says why.",
			Computed: true,
		},
		"conditions": schema.ListNestedAttribute{
			MarkdownDescription: "Karmada's cluster conditions: `Ready` (reasons `ClusterReady`, `ClusterNotReady`, " +
				"`ClusterNotReachable`) and, when ready, `CompleteAPIEnablements`.",
			Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"type":    schema.StringAttribute{MarkdownDescription: "Condition type.", Computed: true},
				"status":  schema.StringAttribute{MarkdownDescription: "`True`, `False` or `Unknown`.", Computed: true},
				"reason":  schema.StringAttribute{MarkdownDescription: "Machine-readable reason, in CamelCase.", Computed: true},
				"message": schema.StringAttribute{MarkdownDescription: "Human-readable details.", Computed: true},
			}},
		},
		"kubernetes_version": schema.StringAttribute{
			MarkdownDescription: "Version of the apiserver, for example `v1.35.4`. Null when the cluster is not ready.",
			Computed:            true,
		},
		"api_enablements": schema.ListNestedAttribute{
			MarkdownDescription: "The API resources the cluster serves, by group version, which the scheduler's API " +
				"enablement filter checks templates against. Null when the cluster is not ready.",
			Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"group_version": schema.StringAttribute{MarkdownDescription: "`group/version`, or `v1` for the core group.", Computed: true},
				"resources": schema.ListNestedAttribute{
					MarkdownDescription: "Resources served in the group version, without subresources.",
					Computed:            true,
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"name": schema.StringAttribute{MarkdownDescription: "Plural resource name, such as `deployments`.", Computed: true},
						"kind": schema.StringAttribute{MarkdownDescription: "Kind, such as `Deployment`.", Computed: true},
					}},
				},
			}},
		},
		"node_summary": schema.SingleNestedAttribute{
			MarkdownDescription: "Node counts. Null when the cluster is not ready.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"total_num": schema.Int64Attribute{MarkdownDescription: "Number of nodes.", Computed: true},
				"ready_num": schema.Int64Attribute{MarkdownDescription: "Number of Ready nodes.", Computed: true},
			},
		},
		"resource_summary": schema.SingleNestedAttribute{
			MarkdownDescription: "Resources of the Ready, schedulable nodes, from which the scheduler estimates how many " +
				"replicas fit (allocatable − allocated − allocating). Null when the cluster is not ready.",
			Computed: true,
			Attributes: map[string]schema.Attribute{
				"allocatable": quantities("Allocatable resources of the Ready, schedulable nodes"),
				"allocated":   quantities("Requests of the pods bound to those nodes"),
				"allocating":  quantities("Requests of the pods not bound to a node yet"),
			},
		},
	}
	dataSourceConnectionAttributes(attrs)
	resp.Schema = schema.Schema{
		MarkdownDescription: "Live status of a member cluster, collected as Karmada's cluster status controller does: " +
			"readiness, Kubernetes version, API enablements, node and resource summaries. It takes the same " +
			"connection attributes as `flotilla_cluster`. Status changes between runs, which is why it lives here " +
			"and not on `flotilla_cluster`.\n\n" +
			"The credentials are used and not kept: the state records `token`, `client_key`, `kubeconfig.raw`, `exec.env` and " +
			"`proxy_url` as null (a data source is read again on every plan, so nothing needs them later).",
		Attributes: attrs,
	}
}

// Configure implements the framework interface: it receives what the provider configured.
func (d *clusterStatusDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig implements the framework interface: it refuses a configuration the engine would refuse, before any plan.
func (d *clusterStatusDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m clusterStatusModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(validateClusterName(m.Name, path.Empty())...)
	resp.Diagnostics.Append(m.connectionModel.validate(ctx, m.Name, path.Empty())...)
}

// Read collects the status. A cluster that does not answer is reported as
// not ready, not as an error: a plan that reads the status of a dead
// cluster must still work.
func (d *clusterStatusDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m clusterStatusModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	diags := validateClusterName(m.Name, path.Empty())
	diags.Append(m.connectionModel.validate(ctx, m.Name, path.Empty())...)
	conn, _, dd := m.connection(ctx)
	diags.Append(dd...)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	if d.data == nil {
		resp.Diagnostics.AddError("Provider not configured", "The flotilla provider was not configured; this is a bug, please report it.")
		return
	}
	name := m.Name.ValueString()
	// A member that stalls (answers /readyz, holds discovery) reads as
	// unreachable after the engine's status timeout, as in a plan.
	status, connected, err := d.data.Engine.MemberStatus(ctx, name, conn)
	if !connected {
		// The connection could not even be built (a kubeconfig file that is
		// gone, say): as unreachable as it gets, and worth a warning since
		// the configuration may be at fault.
		resp.Diagnostics.AddWarning(fmt.Sprintf("Cannot connect to cluster %s", name), err.Error())
	}
	ready := apimeta.IsStatusConditionTrue(status.Conditions, api.ClusterConditionReady)
	if err != nil && ready {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Incomplete status of cluster %s", name), err.Error())
	}
	tflog.Debug(ctx, "collected member cluster status", map[string]any{"cluster": name, "ready": ready, "version": status.KubernetesVersion})
	resp.Diagnostics.Append(m.setStatus(ctx, ready, status)...)
	m.connectionModel = m.withoutCredentials()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// setStatus flattens a collected status into the model.
func (m *clusterStatusModel) setStatus(ctx context.Context, ready bool, s api.ClusterStatus) diag.Diagnostics {
	var diags, d diag.Diagnostics
	m.Ready = types.BoolValue(ready)
	conditions := make([]conditionModel, len(s.Conditions))
	for i, c := range s.Conditions {
		conditions[i] = conditionModel{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
	}
	m.Conditions, d = types.ListValueFrom(ctx, conditionObjectType, conditions)
	diags.Append(d...)
	m.KubernetesVersion = nullIfEmpty(s.KubernetesVersion)

	m.APIEnablements = types.ListNull(apiEnablementObjectType)
	if ready {
		enablements := make([]apiEnablementModel, len(s.APIEnablements))
		for i, e := range s.APIEnablements {
			enablements[i] = apiEnablementModel{GroupVersion: e.GroupVersion, Resources: make([]apiResourceModel, len(e.Resources))}
			for j, r := range e.Resources {
				enablements[i].Resources[j] = apiResourceModel{Name: r.Name, Kind: r.Kind}
			}
		}
		m.APIEnablements, d = types.ListValueFrom(ctx, apiEnablementObjectType, enablements)
		diags.Append(d...)
	}

	m.NodeSummary = types.ObjectNull(nodeSummaryObjectType.AttrTypes)
	if s.NodeSummary != nil {
		m.NodeSummary, d = types.ObjectValueFrom(ctx, nodeSummaryObjectType.AttrTypes,
			nodeSummaryModel{TotalNum: int64(s.NodeSummary.TotalNum), ReadyNum: int64(s.NodeSummary.ReadyNum)})
		diags.Append(d...)
	}
	m.ResourceSummary = types.ObjectNull(resourceSummaryObjectType.AttrTypes)
	if r := s.ResourceSummary; r != nil {
		m.ResourceSummary, d = types.ObjectValueFrom(ctx, resourceSummaryObjectType.AttrTypes, resourceSummaryModel{
			Allocatable: quantityStrings(r.Allocatable), Allocated: quantityStrings(r.Allocated), Allocating: quantityStrings(r.Allocating),
		})
		diags.Append(d...)
	}
	return diags
}

func quantityStrings(l corev1.ResourceList) map[string]string {
	out := make(map[string]string, len(l))
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}
