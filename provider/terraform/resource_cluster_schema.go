package terraform

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
)

// clusterResourceSchema is flotilla_cluster's schema, built once.
var clusterResourceSchema = sync.OnceValue(func() schema.Schema {
	nonEmpty := []validator.String{stringvalidator.LengthAtLeast(1)}
	attrs := map[string]schema.Attribute{
		clusterAttrName: schema.StringAttribute{
			MarkdownDescription: clusterNameDescription + " Changing it replaces the resource: the member leaves the " +
				"fleet under the old name and joins under the new one.",
			Required:      true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		clusterAttrID: schema.StringAttribute{
			MarkdownDescription: "The cluster's name. Known at plan time.",
			Computed:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), clusterIDModifier{}},
		},
		clusterAttrLabels: schema.MapAttribute{
			MarkdownDescription: "Labels of the cluster, which `cluster_affinity.label_selector` of a propagation policy " +
				"matches. Keys and values must be valid Kubernetes labels.",
			ElementType: types.StringType,
			Optional:    true,
		},
		clusterAttrCloudProvider: schema.StringAttribute{
			MarkdownDescription: "Cloud provider of the cluster, Karmada's `spec.provider`, which `field_selector` " +
				"(key `provider`) and spread constraints match. Named `cloud_provider` because `provider` is a " +
				"Terraform meta-argument.",
			Optional:   true,
			Validators: nonEmpty,
		},
		clusterAttrRegion: schema.StringAttribute{
			MarkdownDescription: "Region of the cluster, Karmada's `spec.region`, for `field_selector` (key `region`) " +
				"and spreading by region.",
			Optional:   true,
			Validators: nonEmpty,
		},
		clusterAttrZones: schema.ListAttribute{
			MarkdownDescription: "Zones the cluster spans, Karmada's `spec.zones`, for `field_selector` (key `zone`) " +
				"and spreading by zone.",
			ElementType: types.StringType,
			Optional:    true,
			Validators:  []validator.List{listvalidator.ValueStringsAre(nonEmpty...)},
		},
		clusterAttrSyncMode: schema.StringAttribute{
			MarkdownDescription: "Karmada's `spec.syncMode`. Only `Push` (the default): Terraform reaches every member " +
				"itself. A member Terraform cannot reach needs `Pull`, which only the continuous control plane " +
				"serves, through an agent in the member; see the pull-mode guide.",
			Optional: true,
		},
		clusterAttrTaints: schema.ListNestedAttribute{
			MarkdownDescription: "Taints of the cluster, Karmada's `spec.taints`: templates land here only if their " +
				"propagation policy tolerates them. `NoExecute` also moves existing replicas away.",
			Optional: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"key": schema.StringAttribute{
					MarkdownDescription: "Taint key, a qualified name such as `dedicated` or `example.com/gpu`.",
					Required:            true,
				},
				"value": schema.StringAttribute{
					MarkdownDescription: "Taint value, a valid label value; may be left out.",
					Optional:            true,
				},
				"effect": schema.StringAttribute{
					MarkdownDescription: "Taint effect: " + taintEffects + ".",
					Required:            true,
				},
			}},
		},
	}
	resourceConnectionAttributes(attrs)
	return schema.Schema{
		MarkdownDescription: "Registers a member cluster in the fleet: its name, how flotilla reaches it, and the facts " +
			"the scheduler filters and spreads on (labels, provider, region, zones, taints). Pass it to " +
			"`flotilla_manifest` by reference: `clusters = [flotilla_cluster.east]`.\n\n" +
			"Registering records the fleet and name in the cluster, in the immutable ConfigMap `" +
			member.MembershipNamespace + "/" + member.MembershipName + "` (the facts go in its `" +
			member.MembershipFactsAnnotation + "` annotation), so one physical cluster never joins under two names " +
			"or two fleets. Destroying the resource removes it. The `" + member.MembershipNamespace + "` namespace, which " +
			"registering creates when missing (labelled `app.kubernetes.io/managed-by: flotilla`), stays: remove it " +
			"yourself once nothing in it is needed.\n\n" +
			"Exactly one way of connecting is set: `kubeconfig` (a file with a context, or inline), or `host` with " +
			"one of `token`, `client_certificate` and `client_key`, or `exec`. The connection may be unknown at plan " +
			"time (a cluster created in the same apply): flotilla only needs it to apply.\n\n" +
			"The resource holds no live status (readiness, version, capacity), so references to it do not change " +
			"between runs; read that with the `flotilla_cluster_status` data source. When the cluster cannot be " +
			"reached, refresh warns and keeps the state, and destroy warns and forgets it.",
		Attributes: attrs,
	}
})

// clusterIDModifier plans the id from the name, so it is known at plan time
// even on create.
type clusterIDModifier struct{}

// Description implements the validator or plan modifier interface.
func (clusterIDModifier) Description(context.Context) string { return "The id is the cluster's name." }

// MarkdownDescription implements the validator or plan modifier interface.
func (m clusterIDModifier) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// PlanModifyString implements planmodifier.String.
func (clusterIDModifier) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	var name types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root(clusterAttrName), &name)...)
	if !name.IsUnknown() && !name.IsNull() {
		resp.PlanValue = name
	}
}
