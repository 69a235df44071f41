package terraform

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// policyResource is one of the four policy resources. A policy is a
// validated value that flotilla_manifest takes by reference; it touches no
// cluster, so create, update and delete only record it in state.
type policyResource struct {
	kind policyKind
}

var (
	_ resource.ResourceWithValidateConfig = (*policyResource)(nil)
	_ resource.ResourceWithImportState    = (*policyResource)(nil)
)

func newPropagationPolicyResource() resource.Resource {
	return &policyResource{kind: propagationPolicyKind}
}

func newClusterPropagationPolicyResource() resource.Resource {
	return &policyResource{kind: clusterPropagationPolicyKind}
}

func newOverridePolicyResource() resource.Resource {
	return &policyResource{kind: overridePolicyKind}
}

func newClusterOverridePolicyResource() resource.Resource {
	return &policyResource{kind: clusterOverridePolicyKind}
}

// Metadata implements the framework interface: it returns the type name.
func (r *policyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.kind.typeName
}

// Schema implements the framework interface: it returns the schema.
func (r *policyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = r.kind.schema()
}

// schema is the resource schema: name, namespace, kind and id, then the
// spec fields derived from the Karmada types.
func (k policyKind) schema() schema.Schema {
	attrs := specAttributes(k.fields())
	attrs[attrName] = schema.StringAttribute{
		MarkdownDescription: "Name of the policy, a DNS subdomain. When two policies select the same template and " +
			"tie on everything else, the lower name wins. Changing it replaces the resource.",
		Required:      true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	if k.namespaced {
		attrs[attrNamespace] = schema.StringAttribute{
			MarkdownDescription: "Namespace of the policy. It applies to templates in this namespace only. Changing it " +
				"replaces the resource.",
			Required:      true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		}
	}
	attrs[attrKind] = schema.StringAttribute{
		MarkdownDescription: "The Karmada kind, always `" + k.kind + "`. It tells the policies apart when a " +
			"`flotilla_manifest` receives several kinds in one list.",
		Computed: true,
		Default:  stringdefault.StaticString(k.kind),
	}
	idForm := "`name`"
	if k.namespaced {
		idForm = "`namespace/name`"
	}
	attrs[attrID] = schema.StringAttribute{
		MarkdownDescription: "Identifier of the policy: " + idForm + ". Known at plan time.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{policyIDModifier{kind: k}},
	}
	return schema.Schema{MarkdownDescription: k.markdownDescription(), Attributes: attrs}
}

// ValidateConfig runs Karmada's defaulting and validation on the
// configuration once it is fully known, and reports each problem on the
// attribute it concerns.
func (r *policyResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if !req.Config.Raw.IsFullyKnown() {
		return
	}
	_, diags := r.kind.decode(req.Config.Raw, path.Empty(), true)
	resp.Diagnostics.Append(diags...)
}

// Create validates the plan (values unknown at validation time are known
// now) and records it.
func (r *policyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	p, diags := r.kind.decode(req.Plan.Raw, path.Empty(), false)
	resp.Diagnostics.Append(diags...)
	if p == nil {
		return
	}
	tflog.Debug(ctx, "recorded policy", map[string]any{"kind": p.Kind, "namespace": p.Namespace, "name": p.Name})
	resp.State.Raw = req.Plan.Raw
}

// Read keeps the state: there is no remote object to refresh.
func (r *policyResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update validates the plan and records it, as Create does.
func (r *policyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	p, diags := r.kind.decode(req.Plan.Raw, path.Empty(), false)
	resp.Diagnostics.Append(diags...)
	if p == nil {
		return
	}
	tflog.Debug(ctx, "recorded policy", map[string]any{"kind": p.Kind, "namespace": p.Namespace, "name": p.Name})
	resp.State.Raw = req.Plan.Raw
}

// Delete has nothing to remove; the framework drops the state.
func (r *policyResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// ImportState reads the policy from Karmada YAML: the ID is
// "FILE:NAMESPACE/NAME", or "FILE:NAME" for the cluster-wide kinds.
func (r *policyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ref, err := r.kind.parseImportID(req.ID)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import ID", err.Error())
		return
	}
	data, err := os.ReadFile(ref.file)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the Karmada YAML to import", err.Error())
		return
	}
	imported, err := r.kind.importState(ref, data)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import "+r.kind.noun, fmt.Sprintf("%s: %v", ref.file, err))
		return
	}
	if len(imported.ignored) > 0 {
		resp.Diagnostics.AddWarning("Karmada fields not imported",
			fmt.Sprintf("%s %s in %s sets fields that flotilla_%s has no attribute for; they were left out:\n  - %s",
				r.kind.kind, r.kind.id(ref.namespace, ref.name), ref.file, r.kind.typeName, strings.Join(imported.ignored, "\n  - ")))
	}
	tflog.Debug(ctx, "imported policy", map[string]any{"kind": r.kind.kind, "id": r.kind.id(ref.namespace, ref.name), "file": ref.file})
	resp.State.Raw = imported.state
}

// policyIDModifier plans the id from the name and namespace, so it is known
// at plan time and a manifest planned in the same run sees the whole policy.
type policyIDModifier struct {
	kind policyKind
}

// Description implements the validator or plan modifier interface.
func (m policyIDModifier) Description(context.Context) string {
	return "The id is derived from the namespace and name."
}

// MarkdownDescription implements the validator or plan modifier interface.
func (m policyIDModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

// PlanModifyString implements planmodifier.String.
func (m policyIDModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	var name, namespace types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(attrName), &name)...)
	if m.kind.namespaced {
		resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(attrNamespace), &namespace)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if name.IsUnknown() || namespace.IsUnknown() {
		resp.PlanValue = types.StringUnknown()
		return
	}
	resp.PlanValue = types.StringValue(m.kind.id(namespace.ValueString(), name.ValueString()))
}
