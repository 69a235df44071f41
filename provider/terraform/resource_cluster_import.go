package terraform

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// importIDForm is the form of flotilla_cluster's import ID.
const importIDForm = "NAME,KUBECONFIG_PATH[,CONTEXT]"

// ImportState takes "NAME,KUBECONFIG_PATH[,CONTEXT]": a bare name cannot be
// reached, so the ID carries a kubeconfig connection too. The Read that
// follows connects, checks that the membership marker names this fleet and
// member, and fills the facts from the marker.
func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.Split(req.ID, ",")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] == "") {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf(
			"Expected %s, for example east,~/.kube/config,kind-east, got %q. A bare name is not enough: flotilla "+
				"must reach the cluster to check its membership and read its facts.", importIDForm, req.ID))
		return
	}
	name := types.StringValue(parts[0])
	if diags := validateClusterName(name, path.Empty()); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	context := types.StringNull()
	if len(parts) == 3 {
		context = types.StringValue(parts[2])
	}
	kubeconfig, diags := types.ObjectValue(
		map[string]attr.Type{connAttrPath: types.StringType, connAttrRaw: types.StringType, connAttrContext: types.StringType},
		map[string]attr.Value{connAttrPath: types.StringValue(parts[1]), connAttrRaw: types.StringNull(), connAttrContext: context},
	)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(clusterAttrName), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(clusterAttrID), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(connAttrKubeconfig), kubeconfig)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, []byte("true"))...)
	tflog.Debug(ctx, "importing member cluster", map[string]any{"cluster": parts[0], "kubeconfig": parts[1]})
}
