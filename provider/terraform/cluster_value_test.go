package terraform

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// membersProbe is a test-only resource, flotilla_test_members, that takes
// clusters the way flotilla_manifest does (a Dynamic list of flotilla_cluster
// values) and records what memberFromValue made of each when it plans. It
// shows what Terraform really sends: references, unknowns and objects
// written by hand.
type membersProbe struct {
	rec *probeRecorder
}

type membersProbeModel struct {
	Clusters types.Dynamic `tfsdk:"clusters"`
}

// probeRecorder keeps the summaries of every create plan, in order: the
// plan of `terraform plan`, then the final plan at apply.
type probeRecorder struct {
	mu    sync.Mutex
	plans [][]memberSummary
}

func (r *probeRecorder) add(s []memberSummary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans = append(r.plans, s)
}

func (r *probeRecorder) all() [][]memberSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]memberSummary(nil), r.plans...)
}

// memberSummary is what the probe records of one member.
type memberSummary struct {
	Name            string            `json:"name"`
	ConnectionKnown bool              `json:"connection_known"`
	FactsKnown      bool              `json:"facts_known"`
	Labels          map[string]string `json:"labels,omitempty"`
	Region          string            `json:"region,omitempty"`
	Zones           []string          `json:"zones,omitempty"`
	Connection      string            `json:"connection,omitempty"`
}

func newMembersProbe(rec *probeRecorder) func() resource.Resource {
	return func() resource.Resource { return membersProbe{rec: rec} }
}

func (membersProbe) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_test_members"
}

func (membersProbe) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"clusters": schema.DynamicAttribute{Required: true},
	}}
}

// ModifyPlan records what memberFromValue makes of each cluster, on create.
func (p membersProbe) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || !req.State.Raw.IsNull() {
		return
	}
	var m membersProbeModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	elems, ok := tfElementsOf(m.Clusters)
	if !ok {
		resp.Diagnostics.AddAttributeError(path.Root("clusters"), "not a list", "")
		return
	}
	var summary []memberSummary
	for i, e := range elems {
		member, connKnown, factsKnown, diags := memberFromValue(ctx, e)
		for _, d := range diags {
			resp.Diagnostics.AddAttributeError(path.Root("clusters").AtListIndex(i), d.Summary(), d.Detail())
		}
		s := memberSummary{
			Name: member.Cluster.Name, ConnectionKnown: connKnown, FactsKnown: factsKnown,
			Labels: member.Cluster.Labels, Region: member.Cluster.Spec.Region, Zones: member.Cluster.Spec.Zones,
		}
		if member.Connection != nil {
			s.Connection = member.Connection.String()
		}
		summary = append(summary, s)
	}
	p.rec.add(summary)
}

func (membersProbe) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (membersProbe) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (membersProbe) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (membersProbe) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// tfElementsOf returns the elements of the Dynamic's list or tuple.
func tfElementsOf(v types.Dynamic) ([]attr.Value, bool) {
	switch t := v.UnderlyingValue().(type) {
	case types.Tuple:
		return t.Elements(), true
	case types.List:
		return t.Elements(), true
	}
	return nil, false
}

// TestClusterMemberFromValue passes flotilla_cluster resources, one with a host
// that is unknown at plan time, and objects written by hand to the probe,
// and checks at plan time what memberFromValue made of each.
func TestClusterMemberFromValue(t *testing.T) {
	t.Parallel()
	f, kubeconfig := startMembers(t, 2)
	m1, m2 := f.Clusters[0], f.Clusters[1]
	config := clusterConfig(
		`resource "terraform_data" "later" { input = { host = `+quoteHCL(m2.Host)+`, region = "ap-south-1" } }`,
		clusterBlock("east", kubeconfigBody(kubeconfig, m1)+`  region = "us-east-1"`+"\n"+`  labels = { tier = "prod" }`),
		clusterBlock("west", fmt.Sprintf("  host = terraform_data.later.output.host\n  token = %q\n  cluster_ca_certificate = %s  region = \"eu-west-1\"",
			m2.Token, hclHeredoc(string(m2.CAData)))),
		`resource "flotilla_test_members" "m" {
  clusters = [
    flotilla_cluster.east,
    flotilla_cluster.west,
    { name = "by-hand", labels = { a = "b" }, zones = ["z1", "z2"], kubeconfig = { path = "/etc/kubeconfig" } },
    { name = "later", region = terraform_data.later.output.region, host = "https://10.0.0.1", token = "t" },
  ]
}`)
	rec := &probeRecorder{}
	atPlan := []memberSummary{
		{Name: "east", ConnectionKnown: true, FactsKnown: true, Labels: map[string]string{"tier": "prod"},
			Region: "us-east-1", Connection: fmt.Sprintf("kubeconfig %s context %s", kubeconfig, m1.Name)},
		{Name: "west", ConnectionKnown: false, FactsKnown: true, Region: "eu-west-1"},
		{Name: "by-hand", ConnectionKnown: true, FactsKnown: true, Labels: map[string]string{"a": "b"},
			Zones: []string{"z1", "z2"}, Connection: "kubeconfig /etc/kubeconfig"},
		{Name: "later", ConnectionKnown: true, FactsKnown: false, Connection: "host https://10.0.0.1 with token"},
	}
	atApply := slices.Clone(atPlan)
	atApply[1].ConnectionKnown, atApply[1].Connection = true, fmt.Sprintf("host %s with token, CA set", m2.Host)
	atApply[3].FactsKnown, atApply[3].Region = true, "ap-south-1"
	tfresource.Test(t, tfresource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.RequireAbove(tfversion.Version1_4_0)},
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}, newMembersProbe(rec)),
		Steps: []tfresource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectUnknownValue("flotilla_cluster.west", tfjsonpath.New("host")),
						plancheck.ExpectSensitiveValue("flotilla_cluster.west", tfjsonpath.New("token")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					plans := rec.all()
					if len(plans) < 2 {
						return fmt.Errorf("want a plan and a final plan, got %d plans", len(plans))
					}
					if diff := cmp.Diff(atPlan, plans[0]); diff != "" {
						return fmt.Errorf("members at plan time (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(atApply, plans[len(plans)-1]); diff != "" {
						return fmt.Errorf("members at apply (-want +got):\n%s", diff)
					}
					return nil
				},
			},
			{
				Config: clusterConfig(`resource "flotilla_test_members" "bad" {
  clusters = [{ name = "bad", kubeconfig = { path = "/k" }, taints = [{ key = "a", effect = "Sometimes" }] }]
}`),
				ExpectError: wrappedMessage(`Attribute taints[0].effect of cluster "bad": Unsupported value: "Sometimes"`),
			},
			{
				Config: clusterConfig(`resource "flotilla_test_members" "typo" {
  clusters = [{ name = "typo", regoin = "us-east-1", kubeconfig = { path = "/k" } }]
}`),
				ExpectError: wrappedMessage(`Expected a flotilla_cluster resource, for example flotilla_cluster.east: unexpected attribute "regoin".`),
			},
		},
	})
}

// TestClusterFactPath maps Karmada field paths of cluster validation to
// attribute paths.
func TestClusterFactPath(t *testing.T) {
	tests := []struct {
		field string
		want  string
		ok    bool
	}{
		{"spec.taints[1].effect", "clusters[2].taints[1].effect", true},
		{"spec.taints[0]", "clusters[2].taints[0]", true},
		{"metadata.labels", "clusters[2].labels", true},
		{"spec.zones[3]", "clusters[2].zones[3]", true},
		{"spec.provider", "clusters[2].cloud_provider", true},
		{"metadata.name", "", false},
		{"spec.taintsX", "", false},
		{"spec.resourceModels[0].grade", "", false},
	}
	for _, tt := range tests {
		p, ok := factPath(tt.field, path.Root("clusters").AtListIndex(2))
		got := ""
		if ok {
			got = p.String()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
			t.Errorf("factPath(%q) = %q, %t; want %q, %t", tt.field, got, ok, tt.want, tt.ok)
		}
	}
}
