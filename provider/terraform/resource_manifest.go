package terraform

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Default wait for a rollout to become healthy, when the timeouts block sets none.
const defaultRolloutTimeout = 10 * time.Minute

type manifestResource struct {
	data *providerData
}

var (
	_ resource.Resource                   = (*manifestResource)(nil)
	_ resource.ResourceWithConfigure      = (*manifestResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*manifestResource)(nil)
	_ resource.ResourceWithImportState    = (*manifestResource)(nil)
	_ resource.ResourceWithValidateConfig = (*manifestResource)(nil)
)

func newManifestResource() resource.Resource { return &manifestResource{} }

// Metadata implements the framework interface: it returns the type name.
func (r *manifestResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_manifest"
}

// Configure implements the framework interface: it receives what the provider configured.
func (r *manifestResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// Schema implements the framework interface: it returns the schema.
func (r *manifestResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A resource template, such as a Deployment, propagated to the member clusters its " +
			"propagation policy selects. `terraform plan` shows the `placement` (cluster → replicas) and the " +
			"`rendered` object per cluster before anything rolls out; `terraform apply` applies exactly that " +
			"with server-side apply, prunes clusters the template left, and waits until it is healthy.\n\n" +
			"The fleet is passed by value: `clusters`, `propagation_policies`, `override_policies` and `resource_interpreters` take the " +
			"flotilla resources themselves, so Terraform orders and plans every input. They are write-only (Terraform 1.11 or later): " +
			"Terraform hands them to plan and apply but stores them nowhere, and a change to them shows in the plan as what it changes " +
			"(`placement`, `rendered`, `connections`), not as a change of the inputs.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The template's identity: `<group>/<version>, Kind=<kind>, <namespace>/<name>`.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"manifest": schema.DynamicAttribute{
				MarkdownDescription: "The resource template: any Kubernetes object, for example `provider::flotilla::decode_manifests(file(\"web.yaml\"))[0]` or an HCL object. " +
					"It needs `apiVersion`, `kind` and `metadata.name`; a namespaced object without `metadata.namespace` goes to `default`. " +
					"Changing its kind, namespace or name replaces the resource. " +
					"Sensitive: a manifest may hold a Secret, and Terraform cannot mark one object sensitive and another not, so the plan shows a change " +
					"of the manifest as a per-field diff of `rendered` instead, with the values of a Secret's data (and of the provider's `sensitive_kinds`) shown as keyed tags.",
				Required:  true,
				Sensitive: true,
			},
			"clusters": schema.DynamicAttribute{
				MarkdownDescription: "The member clusters: a list of `flotilla_cluster` resources, e.g. `[flotilla_cluster.east, flotilla_cluster.west]`. " +
					"Write-only: it carries their connections, and only the connections of the clusters the object is placed in are recorded, in `connections`.",
				Required:  true,
				Sensitive: true,
				WriteOnly: true,
			},
			"propagation_policies": schema.DynamicAttribute{
				MarkdownDescription: "Candidate propagation policies: a list of `flotilla_propagation_policy` and `flotilla_cluster_propagation_policy` resources. " +
					"The one that claims the template is chosen as Karmada does: a namespaced policy before a cluster-wide one, then the higher priority, then the more specific selector (name, then label selector, then kind), then the lower name. " +
					"A template no policy claims is applied nowhere. Write-only.",
				Optional:  true,
				WriteOnly: true,
			},
			"override_policies": schema.DynamicAttribute{
				MarkdownDescription: "Candidate override policies: a list of `flotilla_override_policy` and `flotilla_cluster_override_policy` resources. " +
					"Every one whose selectors match applies, cluster-wide ones first, each set by specificity then name. Write-only.",
				Optional:  true,
				WriteOnly: true,
			},
			"resource_interpreters": schema.DynamicAttribute{
				MarkdownDescription: "Karmada resource interpreter customizations: a list of `flotilla_resource_interpreter` resources. " +
					"For the kind a customization targets, each operation it scripts replaces flotilla's built-in rule in the plan: " +
					"the replicas divided among clusters (`replica_resource`, `replica_revision`) and so `placement` and `rendered`, " +
					"the fields members keep (`retention`), and the health and `status` that apply waits for and refresh reads. " +
					"Two customizations scripting the same operation of one kind are refused. Write-only: apply records the " +
					"customizations in the resource's private state for the refreshes that follow.",
				Optional:  true,
				WriteOnly: true,
			},
			attrQuotas: schema.DynamicAttribute{
				MarkdownDescription: "FederatedResourceQuotas of the template's namespace: a list of `flotilla_federated_resource_quota` resources. " +
					"The plan is refused, with the numbers, when the template's replicas would take the namespace over a quota's `overall` " +
					"(as continuous mode refuses to schedule it), and dynamic division and `Aggregated` give an assigned cluster no more replicas " +
					"than its static assignment admits. Only this manifest's own replicas are counted: other manifests' usage is not visible to its plan " +
					"(see the FederatedResourceQuota guide). Write-only.",
				Optional:  true,
				WriteOnly: true,
			},
			"dependencies": schema.DynamicAttribute{
				MarkdownDescription: "Objects the workload's pods use, such as ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims, as a list of manifests. " +
					"When the claiming policy has `propagate_deps = true` (Karmada's propagateDeps), each one the pod template refers to goes to every cluster the workload goes to, with its own override policies applied, in the same apply. " +
					"A dependency no policy places and the workload does not refer to is applied nowhere, with a warning. " +
					"Sensitive, as `manifest` is; `dependencies_rendered` shows each change.",
				Optional:  true,
				Sensitive: true,
			},
			"reschedule_trigger": schema.StringAttribute{
				MarkdownDescription: "Placements are sticky: replicas stay where they run, and a template that fell back to a later `cluster_affinities` term stays on it when an earlier term becomes feasible again, as in Karmada. " +
					"Change this value (any string, such as a date) to schedule from scratch once, as Karmada's `rescheduleTriggeredAt` does; for example to fail back to the primary after a disaster-recovery failover.",
				Optional: true,
			},
			"wait_for_rollout": schema.BoolAttribute{
				MarkdownDescription: "Wait after apply until the object is healthy in every cluster (Karmada's health rules, e.g. a Deployment's updated replicas available), within the create or update timeout. Defaults to `true`. " +
					"With a staged rollout (`stages`), apply waits on each stage's gate whatever this says.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
			},
			"placement": schema.MapAttribute{
				MarkdownDescription: "Cluster → replicas, as scheduled. Non-workloads have 0 replicas in each selected cluster.",
				ElementType:         types.Int64Type,
				Computed:            true,
			},
			"suspended_clusters": schema.SetAttribute{
				MarkdownDescription: "The clusters of `placement` the claiming policy's `suspension` holds back (Karmada's `dispatching` and " +
					"`dispatching_on_clusters`); null when none is. They stay in `placement` and `rendered`, which show what they get once the " +
					"suspension is lifted, but apply applies nothing to them and prunes nothing from them, and refresh leaves their recorded " +
					"object alone. Lifting the suspension shows as a change here, and the next apply dispatches to them.",
				ElementType: types.StringType,
				Computed:    true,
			},
			attrStages: schema.ListNestedAttribute{
				MarkdownDescription: "The staged rollout, when the claiming policy has a `rollout`: its stages in order, each with the " +
					"placed clusters it updates (`name`, `clusters`), the implicit `remaining` stage last when some clusters no stage " +
					"selects. Null without a rollout. Apply updates the clusters stage by stage, in batches of the stage's " +
					"`max_concurrent_clusters`, and waits on each stage's `gate` before the next one; `rendered` shows what each " +
					"cluster gets. When a gate fails, apply stops with an error naming the stage, its clusters and why they are " +
					"unhealthy, and the state records which clusters run the new rendering: the next plan shows the others still " +
					"pending, and the next apply continues with them.",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						MarkdownDescription: "The stage's name; `remaining` for the implicit last stage.",
						Computed:            true,
					},
					"clusters": schema.ListAttribute{
						MarkdownDescription: "The stage's clusters, in the order they update (by name).",
						ElementType:         types.StringType,
						Computed:            true,
					},
				}},
			},
			"rendered": schema.MapAttribute{
				MarkdownDescription: "Cluster → the exact object applied there, after replica division, overrides and ownership labels, as JSON: " +
					"the plan shows a change as a per-field diff (`jsonencode({ ~ spec = { ~ replicas = 1 -> 2 } })`), and `jsondecode(rendered[\"east\"])` reads it. " +
					"After a refresh it holds what runs in each member for the fields flotilla manages, so drift shows in the next plan. " +
					"The values of a Secret's `data` and `stringData` (and of the kinds the provider's `sensitive_kinds` lists) are shown as " +
					"`(sensitive value hmac:…)`, an HMAC-SHA256 per key under a random key of this resource's own, kept in its private state (which " +
					"Terraform never shows): a changed key shows as a changed tag, and nothing here lets a reader of the plan test a guess of a value offline. " +
					"The plan that creates the resource has no key yet and shows each such value as `(sensitive value)`; the refresh after the create records the tags. " +
					"The `flotilla.io/rendered-hash` annotation of such an object is keyed the same way.",
				ElementType: types.StringType,
				Computed:    true,
			},
			"dependencies_rendered": schema.ListAttribute{
				MarkdownDescription: "For each element of `dependencies`, in order: cluster → the exact object applied there, as JSON, a Secret's data tagged as in `rendered`.",
				ElementType:         types.MapType{ElemType: types.StringType},
				Computed:            true,
			},
			"connections": schema.MapAttribute{
				MarkdownDescription: "Cluster → how flotilla reaches it, for each cluster the object is or was placed in: what refresh and destroy use, as they get no configuration. " +
					"Taken from `clusters` at plan time, so a changed connection (a rotated token) shows as a change here. " +
					"A recorded connection that runs a credential plugin is used only if the provider block's " +
					"`trusted_exec` names it: otherwise refresh keeps the last known state with a warning and destroy stops with an error.",
				ElementType: types.StringType,
				Computed:    true,
				Sensitive:   true,
			},
			"policy": schema.StringAttribute{
				MarkdownDescription: "The propagation policy that claims the template, e.g. `PropagationPolicy default/web`; null when none does.",
				Computed:            true,
			},
			"affinity_term": schema.StringAttribute{
				MarkdownDescription: "The `cluster_affinities` term that was chosen, when the policy has terms.",
				Computed:            true,
			},
			"status": schema.DynamicAttribute{
				MarkdownDescription: "Status after apply: `health` (Healthy, Unhealthy or Unknown), `clusters` (per cluster: `health`, `message`) and `aggregated` (the template's status summed over members, e.g. `readyReplicas`).",
				Computed:            true,
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
