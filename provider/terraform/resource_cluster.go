package terraform

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// clusterResource is flotilla_cluster: it registers a member in the fleet
// by writing the membership marker into the cluster, and keeps the member's
// declared facts. It stores no live status.
type clusterResource struct {
	data *providerData
}

var (
	_ resource.ResourceWithConfigure      = (*clusterResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterResource)(nil)
)

func newClusterResource() resource.Resource { return &clusterResource{} }

// Metadata implements the framework interface: it returns the type name.
func (r *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

// Schema implements the framework interface: it returns the schema.
func (r *clusterResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clusterResourceSchema()
}

// Configure implements the framework interface: it receives what the provider configured.
func (r *clusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig checks what is known of the configuration; the rest is
// checked again on the plan at apply, when everything is known.
func (r *clusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m clusterModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(m.validate(ctx, path.Empty())...)
}

// clusterDecl is a flotilla_cluster plan or state, converted and validated.
type clusterDecl struct {
	name  string
	conn  member.Connection
	facts member.Facts
}

func (r *clusterResource) decl(ctx context.Context, m clusterModel) (clusterDecl, diag.Diagnostics) {
	diags := m.validate(ctx, path.Empty())
	conn, connKnown, d := m.connection(ctx)
	diags.Append(d...)
	facts, factsKnown, d := m.facts(ctx)
	diags.Append(d...)
	if !diags.HasError() && (!connKnown || !factsKnown) {
		diags.AddError("Unknown cluster attributes", "Every attribute of flotilla_cluster must be known at apply; "+
			"this is a bug in the provider or in Terraform, please report it.")
	}
	if !diags.HasError() && r.data == nil {
		diags.AddError("Provider not configured", "The flotilla provider was not configured; this is a bug, please report it.")
	}
	return clusterDecl{name: m.Name.ValueString(), conn: conn, facts: facts}, diags
}

// connectionPath is the attribute a connection failure points at: the way
// of connecting in use.
func (d clusterDecl) connectionPath() path.Path {
	if d.conn.Host != "" {
		return path.Root(connAttrHost)
	}
	return path.Root(connAttrKubeconfig)
}

// connect returns the member's probed client through the engine
// (Engine.Connect). The error names the cluster ("cluster east is not
// connected: …") and never holds a credential.
func (r *clusterResource) connect(ctx context.Context, d clusterDecl) (*member.Client, error) {
	// Connection's String redacts every credential.
	tflog.Debug(ctx, "connecting to member cluster", map[string]any{"cluster": d.name, "connection": d.conn.String()})
	return r.data.Engine.Connect(ctx, d.name, d.conn)
}

// register reaches the cluster a plan declares and registers it in this
// fleet, with its facts; ok is false when diagnostics say why not.
func (r *clusterResource) register(ctx context.Context, plan clusterModel, diags *diag.Diagnostics) (d clusterDecl, client *member.Client, ok bool) {
	d, ds := r.decl(ctx, plan)
	if diags.Append(ds...); ds.HasError() {
		return d, nil, false
	}
	client, err := r.connect(ctx, d)
	if err != nil {
		diags.AddAttributeError(d.connectionPath(), fmt.Sprintf("Cannot reach cluster %s", d.name), err.Error())
		return d, nil, false
	}
	if err := r.data.Engine.Register(ctx, client, d.name, d.facts); err != nil {
		addRegisterError(diags, d.name, err)
		return d, nil, false
	}
	return d, client, true
}

// Create registers the member in the fleet: it connects, checks the one-name marker and writes it.
func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	d, _, ok := r.register(ctx, plan, &resp.Diagnostics)
	if !ok {
		return
	}
	tflog.Info(ctx, "registered member cluster", map[string]any{"cluster": d.name, "fleet": r.data.Fleet, "connection": d.conn.String()})
	plan.ID = types.StringValue(d.name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func addRegisterError(diags *diag.Diagnostics, name string, err error) {
	if errors.Is(err, member.ErrAlreadyRegistered) {
		diags.AddAttributeError(path.Root(clusterAttrName), "Cluster already registered", fmt.Sprintf(
			"%v.\n\nA physical cluster joins one fleet under one name. Destroy the flotilla_cluster that registered it "+
				"(or remove ConfigMap %s/%s from the cluster) before registering it as %q.",
			err, member.MembershipNamespace, member.MembershipName, name))
		return
	}
	diags.AddError(fmt.Sprintf("Cannot register cluster %s", name), err.Error())
}

// privateImported marks, in the private state, a Read that follows an
// import: only that Read fills the facts from the membership marker.
const privateImported = "imported"

// Read checks that the member is still registered under this fleet and
// name. A cluster that cannot be reached keeps its state, with a warning;
// one whose marker is gone is removed from the state, so the next plan
// registers it again. The declared facts are the configuration's, except
// right after an import, when they are read from the marker.
func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state clusterModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	imported, diags := req.Private.GetKey(ctx, privateImported)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	d, diags := r.decl(ctx, state)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	if err := r.data.Trusted.check(d.conn); err != nil {
		resp.Diagnostics.AddAttributeWarning(d.connectionPath(), fmt.Sprintf("Cannot refresh cluster %s", d.name), fmt.Sprintf(
			"%v\n\nThe state of cluster %s is kept as it is. Plan and apply use the configuration's connection.", err, d.name))
		return
	}
	client, err := r.connect(ctx, d)
	if err != nil {
		if imported != nil {
			resp.Diagnostics.AddAttributeError(d.connectionPath(), fmt.Sprintf("Cannot import cluster %s", d.name), err.Error())
			return
		}
		tflog.Warn(ctx, "member cluster not reachable, keeping its state", map[string]any{"cluster": d.name, "error": err.Error()})
		resp.Diagnostics.AddAttributeWarning(d.connectionPath(), fmt.Sprintf("Cluster %s is not reachable", d.name), fmt.Sprintf(
			"%v\n\nflotilla could not check that cluster %s is still registered in fleet %q; its state is kept as it is.",
			err, d.name, r.data.Fleet))
		return
	}
	// Only an import needs the facts: a hand-edited facts annotation must not
	// stand in the way of a refresh.
	reg, found, err := r.data.Engine.Registration(ctx, client, imported != nil)
	switch {
	case err != nil:
		resp.Diagnostics.AddError(fmt.Sprintf("Cannot read the membership of cluster %s", d.name), err.Error())
		return
	case !found && imported != nil:
		resp.Diagnostics.AddError(fmt.Sprintf("Cluster %s is not registered", d.name), fmt.Sprintf(
			"The cluster at %s carries no membership marker (ConfigMap %s/%s), so there is nothing to import; "+
				"declare it with a flotilla_cluster resource and apply instead.", client.Host, member.MembershipNamespace, member.MembershipName))
		return
	case !found:
		tflog.Info(ctx, "member cluster no longer registered, removing it from the state", map[string]any{"cluster": d.name, "fleet": r.data.Fleet})
		resp.State.RemoveResource(ctx)
		return
	case reg.Fleet != r.data.Fleet || reg.Member != d.name:
		resp.Diagnostics.AddAttributeError(path.Root(clusterAttrName), fmt.Sprintf("Cluster %s is registered elsewhere", d.name), fmt.Sprintf(
			"The cluster at %s is registered as %q in fleet %q, not as %q in fleet %q. Check the connection, the "+
				"provider's fleet, or which resource registered the cluster.", client.Host, reg.Member, reg.Fleet, d.name, r.data.Fleet))
		return
	case imported == nil:
		return
	}
	if reg.Facts != nil {
		resp.Diagnostics.Append(state.setFacts(ctx, *reg.Facts)...)
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update rewrites the facts in the marker. When the connection changed it
// probes the new one and registers the member there (a no-op when the
// marker is already there); if the old connection reached another physical
// cluster, that cluster's marker is removed.
func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	d, client, ok := r.register(ctx, plan, &resp.Diagnostics)
	if !ok {
		return
	}
	tflog.Info(ctx, "updated member cluster", map[string]any{"cluster": d.name, "fleet": r.data.Fleet, "connection": d.conn.String()})
	if previous, _, _ := state.connection(ctx); !reflect.DeepEqual(previous, d.conn) {
		r.releasePrevious(ctx, d.name, previous, d.conn, client, &resp.Diagnostics)
	}
	plan.ID = types.StringValue(d.name)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// releasePrevious removes the member's marker from the cluster the
// previous connection reached, if that is not the cluster current reaches
// (compared by the kube-system namespace's UID, Karmada's cluster ID).
// Failures are warnings: the member is registered where it should be.
func (r *clusterResource) releasePrevious(ctx context.Context, name string, previous, configured member.Connection, current *member.Client, diags *diag.Diagnostics) {
	warn := func(err error) {
		diags.AddWarning(fmt.Sprintf("Cannot check the previous cluster of %s", name), fmt.Sprintf(
			"%v\n\nThe connection of cluster %s changed. If the old connection reached another physical cluster, that "+
				"cluster still carries the membership marker ConfigMap %s/%s; delete it there, or that cluster cannot "+
				"join a fleet under another name.", err, name, member.MembershipNamespace, member.MembershipName))
	}
	// The previous connection comes from state: it runs or reads only what
	// the configuration or the provider block names.
	if err := r.data.Trusted.withConnection(configured).check(previous); err != nil {
		warn(err)
		return
	}
	released, err := r.data.Engine.ReleasePrevious(ctx, name, previous, current)
	if err != nil {
		warn(err)
		return
	}
	if !released {
		return
	}
	tflog.Info(ctx, "unregistered member from the cluster its previous connection reached", map[string]any{"cluster": name, "fleet": r.data.Fleet})
}

// Delete removes the membership marker. A cluster that cannot be reached is
// removed from the state anyway, with a warning, so a dead cluster can
// always be dropped from the fleet.
func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	d, diags := r.decl(ctx, state)
	if resp.Diagnostics.Append(diags...); diags.HasError() {
		return
	}
	defer r.data.Engine.Forget(d.name)
	if err := r.data.Trusted.check(d.conn); err != nil {
		resp.Diagnostics.AddAttributeError(d.connectionPath(), fmt.Sprintf("Cannot unregister cluster %s", d.name), fmt.Sprintf(
			"%v\n\nNothing was changed and the resource stays in state. If the state is yours, add the plugin to the provider "+
				"block's trusted_exec, or the overrides to its trusted_connection_overrides, and run destroy again; or remove it with "+
				"terraform state rm and delete the membership marker (ConfigMap %s/%s) in the cluster yourself.",
			err, member.MembershipNamespace, member.MembershipName))
		return
	}
	client, err := r.connect(ctx, d)
	if err != nil {
		tflog.Warn(ctx, "member cluster not reachable, forgetting it", map[string]any{"cluster": d.name, "error": err.Error()})
		resp.Diagnostics.AddAttributeWarning(d.connectionPath(), fmt.Sprintf("Cluster %s is not reachable", d.name), fmt.Sprintf(
			"%v\n\nCluster %s was removed from the fleet's state, but its membership marker (ConfigMap %s/%s) is "+
				"still in the cluster. Delete it there if the cluster comes back, or it cannot join a fleet under "+
				"another name.", err, d.name, member.MembershipNamespace, member.MembershipName))
		return
	}
	if err := r.data.Engine.Unregister(ctx, client, d.name); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Cannot unregister cluster %s", d.name), err.Error())
		return
	}
	tflog.Info(ctx, "unregistered member cluster", map[string]any{"cluster": d.name, "fleet": r.data.Fleet})
}
