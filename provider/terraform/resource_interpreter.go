package terraform

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// interpreterResource is flotilla_resource_interpreter: a Karmada
// ResourceInterpreterCustomization as a validated value, which
// flotilla_manifest takes by value in resource_interpreters. Like the
// policies it touches no cluster.
type interpreterResource struct{}

var (
	_ resource.ResourceWithValidateConfig = (*interpreterResource)(nil)
	_ resource.ResourceWithImportState    = (*interpreterResource)(nil)
)

func newResourceInterpreterResource() resource.Resource { return &interpreterResource{} }

// interpreterFields are the spec attributes, derived from the API type as
// the policies' are (schema_shape.go).
var interpreterFields = sync.OnceValue(func() []*specField {
	return mustSpecFields(reflect.TypeFor[api.ResourceInterpreterCustomizationSpec]())
})

// Metadata names the resource type flotilla_resource_interpreter.
func (r *interpreterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resource_interpreter"
}

// Schema is Karmada's spec in snake_case, with name, kind and id.
func (r *interpreterResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := specAttributes(interpreterFields())
	attrs[attrName] = schema.StringAttribute{
		MarkdownDescription: "Name of the customization. When two customizations script the same operation of the same " +
			"kind, the manifest is refused naming both. Changing it replaces the resource.",
		Required:      true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
	attrs[attrKind] = schema.StringAttribute{
		MarkdownDescription: "The Karmada kind, always `" + api.KindResourceInterpreterCustomization + "`.",
		Computed:            true,
		Default:             stringdefault.StaticString(api.KindResourceInterpreterCustomization),
	}
	attrs[attrID] = schema.StringAttribute{
		MarkdownDescription: "Identifier of the customization: its `name`. Known at plan time.",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{nameIDModifier{}},
	}
	resp.Schema = schema.Schema{Attributes: attrs, MarkdownDescription: "A Karmada ResourceInterpreterCustomization " +
		"(config.karmada.io/v1alpha1): Lua scripts that teach flotilla a custom kind's replicas, health, status and " +
		"dependencies.\n\n" +
		"The customization is a validated value, not a remote object: creating it touches no cluster. A " +
		"`flotilla_manifest` takes it by value (`resource_interpreters = [flotilla_resource_interpreter.rollout]`), " +
		"and plans, renders, applies, waits for and refreshes the kind it targets with its scripts: the replicas in " +
		"`placement` and `rendered`, the fields members keep, the health `wait_for_rollout` waits for, and `status`. " +
		"Operations it does not script keep flotilla's built-in rules.\n\n" +
		"Attributes are Karmada's `spec` fields in snake_case (`replicaResource.luaScript` is " +
		"`replica_resource.lua_script`). Every script is compiled at plan time in the same sandbox that runs it, and " +
		"a script that does not compile, or does not define its function, is reported on its attribute with the " +
		"customization, the operation and the line."}
}

// ValidateConfig compiles the scripts once the configuration is known.
func (r *interpreterResource) ValidateConfig(_ context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if !req.Config.Raw.IsFullyKnown() {
		return
	}
	_, diags := decodeInterpreter(req.Config.Raw, path.Empty())
	resp.Diagnostics.Append(diags...)
}

// Create validates the plan and records it.
func (r *interpreterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw, resp.Diagnostics = recordInterpreter(ctx, req.Plan.Raw, resp.State.Raw)
}

// recordInterpreter validates a planned customization and returns the
// state to record: the plan, or state unchanged when it is invalid.
func recordInterpreter(ctx context.Context, plan, state tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	ric, diags := decodeInterpreter(plan, path.Empty())
	if ric == nil {
		return state, diags
	}
	tflog.Debug(ctx, "recorded resource interpreter", map[string]any{"name": ric.Name, "target": ric.Spec.Target.Kind})
	return plan, diags
}

// Read keeps the state: there is no remote object to refresh.
func (r *interpreterResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update validates the plan and records it, as Create does.
func (r *interpreterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw, resp.Diagnostics = recordInterpreter(ctx, req.Plan.Raw, resp.State.Raw)
}

// Delete has nothing to remove; the framework drops the state.
func (r *interpreterResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState reads the customization from Karmada YAML: the ID is
// "FILE:NAME".
func (r *interpreterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	i := strings.LastIndex(req.ID, ":")
	if i <= 0 || i == len(req.ID)-1 || strings.Contains(req.ID[i+1:], "/") {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("the import ID must look like FILE:NAME, for example interpreters.yaml:argo-rollout; got %q", req.ID))
		return
	}
	file, name := req.ID[:i], req.ID[i+1:]
	data, err := os.ReadFile(file)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the Karmada YAML to import", err.Error())
		return
	}
	state, ignored, err := importInterpreter(data, name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import resource interpreter customization", fmt.Sprintf("%s: %v", file, err))
		return
	}
	if len(ignored) > 0 {
		resp.Diagnostics.AddWarning("Karmada fields not imported",
			fmt.Sprintf("ResourceInterpreterCustomization %s in %s sets fields that flotilla_resource_interpreter has no attribute for; they were left out:\n  - %s",
				name, file, strings.Join(ignored, "\n  - ")))
	}
	tflog.Debug(ctx, "imported resource interpreter", map[string]any{"name": name, "file": file})
	resp.State.Raw = state
}

// nameIDModifier plans the id as the name, so it is known at plan time.
type nameIDModifier struct{}

// Description says where the id comes from.
func (nameIDModifier) Description(context.Context) string { return "The id is the name." }

// MarkdownDescription is Description.
func (m nameIDModifier) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// PlanModifyString plans the id as the planned name.
func (nameIDModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(attrName), &name)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if name.IsUnknown() {
		resp.PlanValue = types.StringUnknown()
		return
	}
	resp.PlanValue = name
}
