package terraform

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/engine"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// This file is the one place that converts between Terraform values and the
// engine's view of a member: member.Connection, member.Facts and
// api.Cluster. flotilla_cluster, flotilla_cluster_status and
// memberFromValue (for flotilla_manifest) all go through it.

// connectionModel holds the connection attributes that flotilla_cluster and
// flotilla_cluster_status share.
type connectionModel struct {
	Kubeconfig           types.Object `tfsdk:"kubeconfig"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	Exec                 types.Object `tfsdk:"exec"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	TLSServerName        types.String `tfsdk:"tls_server_name"`
	ProxyURL             types.String `tfsdk:"proxy_url"`
}

type kubeconfigModel struct {
	Path    types.String `tfsdk:"path"`
	Raw     types.String `tfsdk:"raw"`
	Context types.String `tfsdk:"context"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

// factsModel holds the declared facts of flotilla_cluster.
type factsModel struct {
	Labels        types.Map    `tfsdk:"labels"`
	CloudProvider types.String `tfsdk:"cloud_provider"`
	Region        types.String `tfsdk:"region"`
	Zones         types.List   `tfsdk:"zones"`
	Taints        types.List   `tfsdk:"taints"`
}

type taintModel struct {
	Key    types.String `tfsdk:"key"`
	Value  types.String `tfsdk:"value"`
	Effect types.String `tfsdk:"effect"`
}

// clusterModel is flotilla_cluster's whole value.
type clusterModel struct {
	Name     types.String `tfsdk:"name"`
	ID       types.String `tfsdk:"id"`
	SyncMode types.String `tfsdk:"sync_mode"`
	factsModel
	connectionModel
}

// taintObjectType is the element type of `taints`.
var taintObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"key": types.StringType, "value": types.StringType, "effect": types.StringType,
}}

// valuesKnown reports whether no part of any of the values is unknown.
func valuesKnown(ctx context.Context, values ...attr.Value) bool {
	for _, v := range values {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil || !tv.IsFullyKnown() {
			return false
		}
	}
	return true
}

func (c connectionModel) values() []attr.Value {
	return []attr.Value{c.Kubeconfig, c.Host, c.Token, c.ClientCertificate, c.ClientKey, c.Exec,
		c.ClusterCACertificate, c.Insecure, c.TLSServerName, c.ProxyURL}
}

func (f factsModel) values() []attr.Value {
	return []attr.Value{f.Labels, f.CloudProvider, f.Region, f.Zones, f.Taints}
}

// connection converts the attributes into a member.Connection. known is
// false, with nothing converted, while any attribute is unknown. It does not
// validate; see validateConnection.
func (c connectionModel) connection(ctx context.Context) (conn member.Connection, known bool, diags diag.Diagnostics) {
	if !valuesKnown(ctx, c.values()...) {
		return member.Connection{}, false, nil
	}
	conn = member.Connection{
		Host:                 c.Host.ValueString(),
		Token:                c.Token.ValueString(),
		ClientCertificate:    stringBytes(c.ClientCertificate),
		ClientKey:            stringBytes(c.ClientKey),
		ClusterCACertificate: stringBytes(c.ClusterCACertificate),
		Insecure:             c.Insecure.ValueBool(),
		TLSServerName:        c.TLSServerName.ValueString(),
		ProxyURL:             c.ProxyURL.ValueString(),
	}
	if !c.Kubeconfig.IsNull() {
		var k kubeconfigModel
		diags.Append(c.Kubeconfig.As(ctx, &k, basetypes.ObjectAsOptions{})...)
		conn.KubeconfigPath, conn.Kubeconfig, conn.Context = k.Path.ValueString(), stringBytes(k.Raw), k.Context.ValueString()
	}
	if !c.Exec.IsNull() {
		var e execModel
		diags.Append(c.Exec.As(ctx, &e, basetypes.ObjectAsOptions{})...)
		conn.Exec = &member.ExecConfig{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		if !e.Args.IsNull() {
			diags.Append(e.Args.ElementsAs(ctx, &conn.Exec.Args, false)...)
		}
		if !e.Env.IsNull() {
			diags.Append(e.Env.ElementsAs(ctx, &conn.Exec.Env, false)...)
		}
	}
	return conn, !diags.HasError(), diags
}

func stringBytes(s types.String) []byte {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	return []byte(s.ValueString())
}

// facts converts the declared facts. known is false, with nothing
// converted, while any of them is unknown.
func (f factsModel) facts(ctx context.Context) (facts member.Facts, known bool, diags diag.Diagnostics) {
	if !valuesKnown(ctx, f.values()...) {
		return member.Facts{}, false, nil
	}
	facts.Provider, facts.Region = f.CloudProvider.ValueString(), f.Region.ValueString()
	if !f.Labels.IsNull() {
		diags.Append(f.Labels.ElementsAs(ctx, &facts.Labels, false)...)
	}
	if !f.Zones.IsNull() {
		diags.Append(f.Zones.ElementsAs(ctx, &facts.Zones, false)...)
	}
	if !f.Taints.IsNull() {
		var taints []taintModel
		diags.Append(f.Taints.ElementsAs(ctx, &taints, false)...)
		for _, t := range taints {
			facts.Taints = append(facts.Taints, corev1.Taint{
				Key: t.Key.ValueString(), Value: t.Value.ValueString(), Effect: corev1.TaintEffect(t.Effect.ValueString()),
			})
		}
	}
	return facts, !diags.HasError(), diags
}

// setFacts writes facts read from a membership marker into the model, the
// reverse of facts. Empty facts become null attributes, which is how a
// configuration leaves them out.
func (f *factsModel) setFacts(ctx context.Context, facts member.Facts) diag.Diagnostics {
	var diags, d diag.Diagnostics
	f.Labels = types.MapNull(types.StringType)
	if len(facts.Labels) > 0 {
		f.Labels, d = types.MapValueFrom(ctx, types.StringType, facts.Labels)
		diags.Append(d...)
	}
	f.CloudProvider, f.Region = nullIfEmpty(facts.Provider), nullIfEmpty(facts.Region)
	f.Zones = types.ListNull(types.StringType)
	if len(facts.Zones) > 0 {
		f.Zones, d = types.ListValueFrom(ctx, types.StringType, facts.Zones)
		diags.Append(d...)
	}
	f.Taints = types.ListNull(taintObjectType)
	if len(facts.Taints) > 0 {
		taints := make([]taintModel, len(facts.Taints))
		for i, t := range facts.Taints {
			taints[i] = taintModel{Key: types.StringValue(t.Key), Value: nullIfEmpty(t.Value), Effect: types.StringValue(string(t.Effect))}
		}
		f.Taints, d = types.ListValueFrom(ctx, taintObjectType, taints)
		diags.Append(d...)
	}
	return diags
}

func nullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// clusterOf is the member as the engine declares it: name and facts.
func clusterOf(name string, facts member.Facts) api.Cluster {
	return api.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.ClusterGroupVersion.String(), Kind: api.KindCluster},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: facts.Labels},
		Spec: api.ClusterSpec{
			Provider: facts.Provider,
			Region:   facts.Region,
			Zones:    slices.Clone(facts.Zones),
			Taints:   slices.Clone(facts.Taints),
		},
	}
}

// clusterObjectType is the type of a flotilla_cluster value, as another
// resource receives it (`clusters = [flotilla_cluster.east]`). A resource
// that declares a typed attribute rather than a Dynamic one can use it as
// the element type.
func clusterObjectType() types.ObjectType {
	return clusterResourceSchema().Type().(types.ObjectType)
}

// memberFromValue converts the value of one flotilla_cluster resource, as
// another resource receives it (typically an element of a Dynamic
// `clusters` attribute), into an engine.Member. v is a types.Object (or the
// object a Dynamic value holds) with flotilla_cluster's attributes; an
// object built by hand with a subset of them works too, missing attributes
// being null.
//
// connectionKnown is false while any connection attribute is unknown (a
// `host` from a cluster created in the same apply): m.Connection is nil then,
// which the engine plans from declared facts alone. factsKnown is false
// while the name or any fact is unknown; m.Cluster then holds whatever is
// known. Known parts are validated as flotilla_cluster validates its own
// configuration, and the diagnostics name the attributes.
func memberFromValue(ctx context.Context, v attr.Value) (m engine.Member, connectionKnown bool, factsKnown bool, diags diag.Diagnostics) {
	return memberAt(ctx, v, path.Empty())
}

// withoutCredentials is c with every attribute that may hold a credential
// null: what a data source records, as it needs no connection after the
// read that used it.
func (c connectionModel) withoutCredentials() connectionModel {
	c.Token, c.ClientKey, c.ProxyURL = types.StringNull(), types.StringNull(), types.StringNull()
	c.Kubeconfig = withNullAttribute(c.Kubeconfig, connAttrRaw)
	c.Exec = withNullAttribute(c.Exec, connAttrEnv)
	return c
}

// withNullAttribute is a known object with one attribute set to null.
func withNullAttribute(o types.Object, name string) types.Object {
	if o.IsNull() || o.IsUnknown() {
		return o
	}
	attrs := make(map[string]attr.Value, len(o.Attributes()))
	for k, v := range o.Attributes() {
		attrs[k] = v
	}
	typ, ok := o.AttributeTypes(context.Background())[name]
	if !ok {
		return o
	}
	null, err := typ.ValueFromTerraform(context.Background(), tftypes.NewValue(typ.TerraformType(context.Background()), nil))
	if err != nil {
		return o
	}
	attrs[name] = null
	out, d := types.ObjectValue(o.AttributeTypes(context.Background()), attrs)
	if d.HasError() {
		return o
	}
	return out
}
