package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	policyv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/policy/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/controller/shared"
)

// continuousResourceQuota is the ResourceQuota continuous mode's Work
// carries for the example's quota in cluster, as JSON: the plan must show
// exactly this.
func continuousResourceQuota(t *testing.T, cluster string, hard corev1.ResourceList) string {
	t.Helper()
	q := &policyv1.FederatedResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop", UID: "any"},
		Spec: api.FederatedResourceQuotaSpec{
			Overall:           corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("2"), corev1.ResourceMemory: k8sresource.MustParse("4Gi")},
			StaticAssignments: []api.StaticClusterAssignment{{ClusterName: cluster, Hard: hard}},
		},
	}
	w, err := shared.NewQuotaWork(q, cluster, DefaultFleet)
	if err != nil || w == nil {
		t.Fatalf("NewQuotaWork = %v, %v", w, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scenarioFederatedResourceQuotaExample applies
// examples/resources/flotilla_federated_resource_quota on two real members
// (its kubeconfig contexts replaced by the test fleet's): the plan shows
// each member's ResourceQuota exactly as continuous mode's Work carries it,
// apply creates them and the workload runs within them; a scale-up over
// `overall` is refused at plan with the numbers; a ResourceQuota deleted in
// a member is planned back; a dropped assignment is pruned from its member;
// destroy removes the rest.
func scenarioFederatedResourceQuotaExample(t *testing.T) {
	f := startScenarioFleet(t, 2)
	const dir = "resources/flotilla_federated_resource_quota"
	const addr = "flotilla_federated_resource_quota.shop"
	src := readExample(t, dir+"/resource.tf")
	for _, s := range []string{`"~/.kube/config"`, `"kind-east"`, `"kind-west"`} {
		if !strings.Contains(src, s) {
			t.Fatalf("resource.tf should name %s, which the test replaces with the test fleet's", s)
		}
	}
	example := strings.NewReplacer(`"~/.kube/config"`, quoteHCL(f.kubeconfig), `"kind-east"`, `"member1"`, `"kind-west"`, `"member2"`).Replace(src)
	eastOnly := strings.Replace(example, `    { cluster_name = "west", hard = { cpu = "1", memory = "2Gi" } },`+"\n", "", 1)
	if eastOnly == example {
		t.Fatal("resource.tf should assign west on a line of its own, which the test drops")
	}
	hard := corev1.ResourceList{corev1.ResourceCPU: k8sresource.MustParse("1"), corev1.ResourceMemory: k8sresource.MustParse("2Gi")}
	replicas := func(n int) config.Variables { return config.Variables{"replicas": config.IntegerVariable(n)} }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config:          example,
				ConfigVariables: replicas(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("rendered"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.StringExact(continuousResourceQuota(t, "east", hard)),
						"west": knownvalue.StringExact(continuousResourceQuota(t, "west", hard)),
					})),
				}},
				Check: resource.ComposeTestCheckFunc(
					f.expectResourceQuotas(map[string]string{"member1": "1", "member2": "1"}),
					f.expectDeployments("shop", "web", map[string]int32{"member1": 2, "member2": 2}, nil),
				),
			},
			{
				// flotilla_placement weighs the same quota: 5 replicas are
				// not schedulable, with the numbers, and 3 are divided
				// within the static assignments (east and west 1 CPU each).
				Config:          example + quotaPlacementHCL(5, "over") + quotaPlacementHCL(3, "within"),
				ConfigVariables: replicas(4),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("data.flotilla_placement.over", "schedulable", "false"),
					resource.TestMatchResourceAttr("data.flotilla_placement.over", "error", regexp.MustCompile(`would exceed FederatedResourceQuota shop/shop: cpu: 2500m requested, 0 used of 2`)),
					resource.TestCheckResourceAttr("data.flotilla_placement.within", "schedulable", "true"),
					resource.TestCheckResourceAttr("data.flotilla_placement.within", "placement.%", "2"),
				),
			},
			{
				// 5 x 500m is 2.5 CPUs against an overall 2.
				Config:          example,
				ConfigVariables: replicas(5),
				ExpectError:     regexp.MustCompile(`(?s)would exceed\s+FederatedResourceQuota\s+shop/shop:\s+cpu:\s+2500m\s+requested,\s+0\s+used\s+of\s+2`),
			},
			{
				// Deleted in east by hand: refresh notices and the plan puts it back.
				PreConfig: func() {
					if err := f.clients["member1"].CoreV1().ResourceQuotas("shop").Delete(context.Background(), "shop", metav1.DeleteOptions{}); err != nil {
						t.Fatalf("delete the ResourceQuota in member1: %v", err)
					}
				},
				Config:          example,
				ConfigVariables: replicas(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: f.expectResourceQuotas(map[string]string{"member1": "1", "member2": "1"}),
			},
			{
				// The west assignment dropped: its ResourceQuota is removed.
				Config:          eastOnly,
				ConfigVariables: replicas(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("rendered"), knownvalue.MapExact(map[string]knownvalue.Check{
						"east": knownvalue.StringExact(continuousResourceQuota(t, "east", hard)),
					})),
				}},
				Check: f.expectResourceQuotas(map[string]string{"member1": "1"}),
			},
		},
		CheckDestroy: f.expectResourceQuotas(nil),
	})
}

// quotaPlacementHCL is a flotilla_placement data source named name that
// previews the example's Deployment at replicas with its quota.
func quotaPlacementHCL(replicas int, name string) string {
	return fmt.Sprintf(`
data "flotilla_placement" %q {
  manifest = {
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = { name = "web", namespace = "shop" }
    spec = {
      replicas = %d
      selector = { matchLabels = { app = "web" } }
      template = {
        metadata = { labels = { app = "web" } }
        spec = { containers = [{
          name      = "web"
          image     = "nginx:1.27"
          resources = { requests = { cpu = "500m", memory = "256Mi" } }
        }] }
      }
    }
  }
  clusters                  = [flotilla_cluster.east, flotilla_cluster.west]
  propagation_policies      = [flotilla_propagation_policy.web]
  federated_resource_quotas = [flotilla_federated_resource_quota.shop]
}
`, name, replicas)
}

// expectResourceQuotas checks the shop/shop ResourceQuota in every member:
// present with that hard cpu in the members of want, absent elsewhere.
func (f *scenarioFleet) expectResourceQuotas(want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for member, cs := range f.clients {
			rq, err := cs.CoreV1().ResourceQuotas("shop").Get(context.Background(), "shop", metav1.GetOptions{})
			cpu, placed := want[member]
			switch {
			case apierrors.IsNotFound(err) && placed:
				return fmt.Errorf("%s: ResourceQuota shop/shop is missing", member)
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("%s: %w", member, err)
			case !placed:
				return fmt.Errorf("%s: ResourceQuota shop/shop exists but should not", member)
			case rq.Spec.Hard.Cpu().String() != cpu:
				return fmt.Errorf("%s: ResourceQuota shop/shop has hard cpu %s, want %s", member, rq.Spec.Hard.Cpu(), cpu)
			}
		}
		return nil
	}
}

// TestFederatedResourceQuotaBadInput: each mistake is refused at plan on
// its attribute, naming the quota: a value that is not a quantity, an
// assignment over overall, a cluster listed twice, and an assigned cluster
// missing from clusters.
func TestFederatedResourceQuotaBadInput(t *testing.T) {
	t.Parallel()
	quota := func(overall, assignments, clusters string) string {
		return `
resource "flotilla_cluster" "east" {
  name = "east"
  host = "https://127.0.0.1:1"
  token = "x"
}
resource "flotilla_federated_resource_quota" "team" {
  name               = "team"
  namespace          = "shop"
  overall            = ` + overall + `
  static_assignments = ` + assignments + `
  clusters           = ` + clusters + `
}
`
	}
	east := `[flotilla_cluster.east]`
	for _, tc := range []struct {
		name, config string
		want         string
	}{
		{"not a quantity", quota(`{ cpu = "two" }`, `[]`, east), `(?s)overall\["cpu"\].*"two" is not a quantity`},
		{"assignment not a quantity", quota(`{ cpu = "2" }`, `[{ cluster_name = "east", hard = { cpu = "1 CPU" } }]`, east),
			`(?s)static_assignments\[0\]\.hard\["cpu"\].*"1 CPU" is not a quantity`},
		{"over overall", quota(`{ cpu = "2" }`, `[{ cluster_name = "east", hard = { cpu = "3" } }]`, east),
			`(?s)federated resource quota shop/team.*overall\["cpu"\].*less than the 3 the static assignments\s+add up to`},
		{"resource not in overall", quota(`{ cpu = "2" }`, `[{ cluster_name = "east", hard = { memory = "1Gi" } }]`, east),
			`(?s)static_assignments\[0\]\.hard\["memory"\].*not limited\s+by spec.overall`},
		{"cluster twice", quota(`{ cpu = "2" }`, `[{ cluster_name = "east", hard = { cpu = "1" } }, { cluster_name = "east", hard = { cpu = "1" } }]`, east),
			`(?s)static_assignments\[1\]\.cluster_name.*Duplicate value`},
		{"cluster not passed", quota(`{ cpu = "2" }`, `[{ cluster_name = "west", hard = { cpu = "1" } }]`, east),
			`(?s)static_assignments\[0\]\.cluster_name:\s+FederatedResourceQuota\s+shop/team\s+assigns\s+cluster\s+"west",\s+which\s+is\s+not\s+in\s+clusters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testProviders,
				Steps:                    []resource.TestStep{{Config: tc.config, PlanOnly: true, ExpectError: regexp.MustCompile(tc.want)}},
			})
		})
	}
}
