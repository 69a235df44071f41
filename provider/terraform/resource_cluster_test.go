package terraform

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/member"
	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

const east = "flotilla_cluster.east"

// clusterConfig is a configuration with the provider in fleet "prod" and
// the given resource blocks.
func clusterConfig(blocks ...string) string {
	cfg := "provider \"flotilla\" {\n  fleet = \"prod\"\n  " + trustedContextsHCL + "\n}\n"
	for _, b := range blocks {
		cfg += b + "\n"
	}
	return cfg
}

// clusterBlock is a flotilla_cluster resource named after its label.
func clusterBlock(label, body string) string {
	return fmt.Sprintf("resource \"flotilla_cluster\" %q {\n  name = %q\n%s\n}\n", label, label, body)
}

// kubeconfigBody connects through the fleet kubeconfig's context of c.
func kubeconfigBody(kubeconfig string, c *testenv.Cluster) string {
	return fmt.Sprintf("  kubeconfig = { path = %s, context = %q }\n", quoteHCL(kubeconfig), c.Name)
}

// tokenBody connects to c with host, token and CA.
func tokenBody(c *testenv.Cluster) string {
	return fmt.Sprintf("  host = %q\n  token = %q\n  cluster_ca_certificate = %s", c.Host, c.Token, hclHeredoc(string(c.CAData)))
}

var registered = marker{Found: true, Fleet: "prod", Member: "east"}

// TestClusterResource runs flotilla_cluster against three real member
// apiservers. Members 1 and 3 serve the connection, import and
// connection-change cases; member 2 the facts, refusal and outage cases,
// which end with its apiserver stopped.
func TestClusterResource(t *testing.T) {
	t.Parallel()
	f, kubeconfig := startMembers(t, 3)
	m1, m2, m3 := f.Clusters[0], f.Clusters[1], f.Clusters[2]

	t.Run("members 1 and 3", func(t *testing.T) {
		t.Parallel()
		t.Run("connection kinds", func(t *testing.T) { testClusterConnectionKinds(t, kubeconfig, m1) })
		t.Run("import", func(t *testing.T) { testClusterImport(t, kubeconfig, m1, m3) })
		t.Run("adopt by import", func(t *testing.T) { testClusterAdopt(t, kubeconfig, m1) })
		t.Run("connection moves to another cluster", func(t *testing.T) { testClusterMove(t, kubeconfig, m1, m3) })
	})
	t.Run("member 2", func(t *testing.T) {
		t.Parallel()
		t.Run("facts, refusal and lost marker", func(t *testing.T) { testClusterFacts(t, m2) })
		t.Run("unreachable", func(t *testing.T) { testClusterUnreachable(t, kubeconfig, m2) })
	})
}

func testClusterConnectionKinds(t *testing.T, kubeconfig string, m *testenv.Cluster) {
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	plugin := writeExecPlugin(t)
	// Refresh and destroy run a plugin recorded in state only when the
	// provider block trusts it.
	trusted := fmt.Sprintf("provider \"flotilla\" {\n  fleet = \"prod\"\n  trusted_exec = [{ command = %s, env = { MEMBER_TOKEN = %q } }]\n}\n", quoteHCL(plugin), m.Token)
	kinds := []struct {
		name, body, provider string
	}{
		{"kubeconfig path and context", kubeconfigBody(kubeconfig, m), ""},
		{"inline kubeconfig and context", fmt.Sprintf("  kubeconfig = {\n    raw = %s    context = %q\n  }", hclHeredoc(string(raw)), m.Name), ""},
		{"host, token and CA", tokenBody(m), ""},
		{"host, exec plugin and CA", fmt.Sprintf("  host = %q\n  cluster_ca_certificate = %s  exec = {\n    command = %s\n    env = { MEMBER_TOKEN = %q }\n  }",
			m.Host, hclHeredoc(string(m.CAData)), quoteHCL(plugin), m.Token), trusted},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			config := clusterConfig(clusterBlock("east", k.body))
			if k.provider != "" {
				config = k.provider + clusterBlock("east", k.body)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
				CheckDestroy:             expectMarker(t, m, marker{}),
				Steps: []resource.TestStep{{
					Config: config,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(east, plancheck.ResourceActionCreate),
							plancheck.ExpectKnownValue(east, tfjsonpath.New("id"), knownvalue.StringExact("east")),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: expectMarker(t, m, registered),
				}},
			})
		})
	}
}

func testClusterFacts(t *testing.T, m *testenv.Cluster) {
	first := tokenBody(m) + `
  labels         = { tier = "prod" }
  cloud_provider = "aws"
  region         = "us-east-1"
  zones          = ["us-east-1a"]
  taints         = [{ key = "dedicated", value = "gpu", effect = "NoSchedule" }]
`
	second := tokenBody(m) + `
  labels         = { tier = "dr", team = "payments" }
  cloud_provider = "aws"
  region         = "us-west-2"
  zones          = ["us-west-2a", "us-west-2b"]
  taints         = [{ key = "maintenance", effect = "NoExecute" }]
`
	withFacts := func(facts string) marker {
		want := registered
		want.Facts = facts
		return want
	}
	client := m.Clientset(t)
	deleteMarker := func() {
		err := client.CoreV1().ConfigMaps(member.MembershipNamespace).Delete(context.Background(), member.MembershipName, metav1.DeleteOptions{})
		if err != nil {
			t.Fatalf("delete the marker: %v", err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
		CheckDestroy:             expectMarker(t, m, marker{}),
		Steps: []resource.TestStep{
			{
				Config: clusterConfig(clusterBlock("east", first)),
				Check: expectMarker(t, m, withFacts(`{"labels":{"tier":"prod"},"provider":"aws","region":"us-east-1",`+
					`"zones":["us-east-1a"],"taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}`)),
			},
			{
				// Facts change in place; the marker's data does not.
				Config: clusterConfig(clusterBlock("east", second)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(east, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: expectMarker(t, m, withFacts(`{"labels":{"team":"payments","tier":"dr"},"provider":"aws",`+
					`"region":"us-west-2","zones":["us-west-2a","us-west-2b"],"taints":[{"key":"maintenance","effect":"NoExecute"}]}`)),
			},
			{
				// The marker's facts are read only on import: a hand-edited
				// annotation does not show up as a change.
				PreConfig: func() {
					cm, err := client.CoreV1().ConfigMaps(member.MembershipNamespace).Get(context.Background(), member.MembershipName, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					cm.Annotations[member.MembershipFactsAnnotation] = `{"region":"tampered"}`
					if _, err := client.CoreV1().ConfigMaps(member.MembershipNamespace).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:   clusterConfig(clusterBlock("east", second)),
				PlanOnly: true,
			},
			{
				// The same physical cluster under a second name is refused.
				Config:      clusterConfig(clusterBlock("east", second), clusterBlock("west", tokenBody(m))),
				ExpectError: wrappedMessage(fmt.Sprintf(`cluster at %s is already registered as "east" in fleet "prod"; refusing to register it as "west" in fleet "prod"`, m.Host)),
			},
			{
				// A marker removed behind Terraform's back: the refresh drops
				// the resource and the plan registers it again.
				PreConfig: deleteMarker,
				Config:    clusterConfig(clusterBlock("east", second)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(east, plancheck.ResourceActionCreate)},
				},
				Check: expectMarker(t, m, registered),
			},
			{
				// A marker that now names another fleet is an error.
				PreConfig: func() {
					deleteMarker()
					c, err := member.NewCache(member.CacheOptions{}).Get(context.Background(), "east",
						member.Connection{Host: m.Host, Token: m.Token, ClusterCACertificate: m.CAData})
					if err != nil {
						t.Fatal(err)
					}
					if err := member.Register(context.Background(), c, "dev", "east"); err != nil {
						t.Fatal(err)
					}
				},
				Config:      clusterConfig(clusterBlock("east", second)),
				ExpectError: wrappedMessage(`Cluster east is registered elsewhere`),
			},
			{
				PreConfig: deleteMarker,
				Config:    clusterConfig(clusterBlock("east", second)),
				Check:     expectMarker(t, m, registered),
			},
		},
	})
}

func testClusterImport(t *testing.T, kubeconfig string, m, unregistered *testenv.Cluster) {
	body := kubeconfigBody(kubeconfig, m) + `
  labels         = { tier = "prod", "example.com/team" = "web" }
  cloud_provider = "gcp"
  region         = "europe-west1"
  zones          = ["europe-west1-b", "europe-west1-c"]
  taints = [
    { key = "dedicated", value = "gpu", effect = "NoSchedule" },
    { key = "spot", effect = "PreferNoSchedule" },
  ]
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
		CheckDestroy:             expectMarker(t, m, marker{}),
		Steps: []resource.TestStep{
			{Config: clusterConfig(clusterBlock("east", body)), Check: expectMarker(t, m, registered)},
			{
				// Every attribute comes back: the name and connection from the
				// ID, the facts from the marker.
				ResourceName:      east,
				ImportState:       true,
				ImportStateId:     fmt.Sprintf("east,%s,%s", kubeconfig, m.Name),
				ImportStateVerify: true,
			},
			{
				ResourceName:  east,
				ImportState:   true,
				ImportStateId: "east",
				ExpectError:   wrappedMessage("Expected NAME,KUBECONFIG_PATH[,CONTEXT], for example east,~/.kube/config,kind-east"),
			},
			{
				ResourceName:  east,
				ImportState:   true,
				ImportStateId: fmt.Sprintf("west,%s,%s", kubeconfig, m.Name),
				ExpectError:   wrappedMessage(`is registered as "east" in fleet "prod", not as "west" in fleet "prod"`),
			},
			{
				ResourceName:  east,
				ImportState:   true,
				ImportStateId: fmt.Sprintf("east,%s,%s", kubeconfig, unregistered.Name),
				ExpectError:   wrappedMessage("Cluster east is not registered"),
			},
		},
	})
}

// testClusterAdopt forgets a registered member (a `removed` block), then
// imports it for good: the imported state is the configuration's, so the
// next plan is empty, and destroy unregisters it.
func testClusterAdopt(t *testing.T, kubeconfig string, m *testenv.Cluster) {
	body := kubeconfigBody(kubeconfig, m) + `  labels = { tier = "prod" }` + "\n" + `  taints = [{ key = "spot", effect = "NoSchedule" }]`
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.RequireAbove(tfversion.Version1_7_0)},
		ProtoV6ProviderFactories: clusterTestProviders(&diagRecorder{}),
		CheckDestroy:             expectMarker(t, m, marker{}),
		Steps: []resource.TestStep{
			{Config: clusterConfig(clusterBlock("east", body))},
			{
				Config: clusterConfig("removed {\n  from = flotilla_cluster.east\n  lifecycle { destroy = false }\n}"),
				Check:  expectMarker(t, m, registered),
			},
			{
				Config:             clusterConfig(clusterBlock("east", body)),
				ResourceName:       east,
				ImportState:        true,
				ImportStateId:      fmt.Sprintf("east,%s,%s", kubeconfig, m.Name),
				ImportStatePersist: true,
			},
			{
				Config: clusterConfig(clusterBlock("east", body)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// testClusterMove changes the connection of a member to another physical
// cluster, then to another connection to that same cluster: the marker
// follows the member the first time and stays the second.
func testClusterMove(t *testing.T, kubeconfig string, from, to *testenv.Cluster) {
	rec := &diagRecorder{}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(rec),
		CheckDestroy: func(*terraform.State) error {
			if err := expectMarker(t, from, marker{})(nil); err != nil {
				return err
			}
			return expectMarker(t, to, marker{})(nil)
		},
		Steps: []resource.TestStep{
			{Config: clusterConfig(clusterBlock("east", kubeconfigBody(kubeconfig, from))), Check: expectMarker(t, from, registered)},
			{
				Config: clusterConfig(clusterBlock("east", tokenBody(to))),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(east, plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeTestCheckFunc(
					expectMarker(t, to, registered),
					expectMarker(t, from, marker{}),
				),
			},
			{
				Config: clusterConfig(clusterBlock("east", kubeconfigBody(kubeconfig, to))),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(east, plancheck.ResourceActionUpdate)},
				},
				Check: func(*terraform.State) error {
					if ws := rec.find("ApplyResourceChange", tfprotov6.DiagnosticSeverityWarning, regexp.MustCompile(".")); len(ws) > 0 {
						return fmt.Errorf("unexpected warnings: %v", ws)
					}
					return expectMarker(t, to, registered)(nil)
				},
			},
		},
	})
}

// testClusterUnreachable stops the member's apiserver under an existing
// resource: refresh warns and keeps the state, create fails naming the
// cluster, destroy warns and succeeds. The apiserver is started again at
// the end, and the marker the failed destroy could not remove is still there.
func testClusterUnreachable(t *testing.T, kubeconfig string, m *testenv.Cluster) {
	rec := &diagRecorder{}
	notReachable := regexp.MustCompile(`^Cluster east is not reachable: cluster east is not connected: .*connection refused`)
	cfg := clusterConfig(clusterBlock("east", kubeconfigBody(kubeconfig, m)))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: clusterTestProviders(rec),
		CheckDestroy: func(*terraform.State) error {
			if ws := rec.find("ApplyResourceChange", tfprotov6.DiagnosticSeverityWarning, notReachable); len(ws) != 1 {
				return fmt.Errorf("destroy of an unreachable cluster: want one warning matching %s, got %v", notReachable, rec.all())
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: cfg, Check: expectMarker(t, m, registered)},
			{
				PreConfig: m.StopAPIServer,
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					if ws := rec.find("ReadResource", tfprotov6.DiagnosticSeverityWarning, notReachable); len(ws) == 0 {
						return fmt.Errorf("refresh of an unreachable cluster: want a warning matching %s, got %v", notReachable, rec.all())
					}
					return nil
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(east, tfjsonpath.New("kubeconfig").AtMapKey("context"), knownvalue.StringExact(m.Name)),
				},
			},
			{
				Config: cfg + clusterBlock("west", tokenBody(m)),
				// The error points at the host line and names the cluster.
				ExpectError: regexp.MustCompile(`(?s)Cannot reach cluster west.*` + regexp.QuoteMeta(fmt.Sprintf("host = %q", m.Host)) +
					`.*cluster west is not connected: .*connection\s+refused`),
			},
		},
	})
	if err := m.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := expectMarker(t, m, registered)(nil); err != nil {
		t.Errorf("after destroying an unreachable member: %v", err)
	}
}
