package terraform

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testenv"
)

// TestAccManifestComponents plans and applies a multi-component Widget (a
// customization scripting componentResource: a leader of 1 cpu and 2Gi and
// workers of 2 cpu and 2Gi each) over two members whose nodes the test
// writes: alpha has one node of 32 cpu and 8Gi, room for the four workers
// alone but not for the leader beside them; beta has two nodes of 8 cpu
// and 8Gi, room for the whole set. The plan places the Widget on beta
// only, whole (placement beta = 0: components are not divided), apply
// applies it there with its four workers, and alpha gets nothing. Eight
// workers fit nowhere: the plan fails naming the Widget and, per member,
// that it has room for no complete set of the components.
func TestAccManifestComponents(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t, testenv.Options{Clusters: 2, Mode: testenv.APIServerOnly})
	alpha, beta := env.Clusters[0], env.Clusters[1]
	m := &members{byName: map[string]*testenv.Cluster{"alpha": alpha, "beta": beta},
		clients: map[string]kubernetes.Interface{"alpha": alpha.Clientset(t), "beta": beta.Clientset(t)}}
	createReadyNode(t, m.clients["alpha"], "alpha-0", "32", nil)
	createReadyNode(t, m.clients["beta"], "beta-0", "8", nil)
	createReadyNode(t, m.clients["beta"], "beta-1", "8", nil)
	m.installClusterScopedCRD(t)

	config := func(workers int) string {
		return m.clusterHCL("alpha", "") + m.clusterHCL("beta", "") + fmt.Sprintf(`
resource "flotilla_resource_interpreter" "job" {
  name   = "widget-job"
  target = { api_version = "fleet.example.com/v1", kind = "Widget" }
  customizations = {
    component_resource = { lua_script = <<-EOT
      function GetComponents(obj)
        return {
          {name = "leader", replicas = 1, replicaRequirements = {resourceRequest = {cpu = "1", memory = "2Gi"}}},
          {name = "workers", replicas = obj.spec.workers, replicaRequirements = {resourceRequest = {cpu = "2", memory = "2Gi"}}},
        }
      end
    EOT
    }
  }
}

resource "flotilla_cluster_propagation_policy" "jobs" {
  name               = "jobs"
  resource_selectors = [{ api_version = "fleet.example.com/v1", kind = "Widget" }]
  placement = {
    spread_constraints = [{ spread_by_field = "cluster", min_groups = 1, max_groups = 1 }]
    replica_scheduling = { replica_scheduling_type = "Divided", replica_division_preference = "Aggregated" }
  }
}

resource "flotilla_manifest" "job" {
  manifest = {
    apiVersion = "fleet.example.com/v1"
    kind       = "Widget"
    metadata   = { name = "job" }
    spec       = { workers = %d }
  }
  clusters              = [flotilla_cluster.alpha, flotilla_cluster.beta]
  propagation_policies  = [flotilla_cluster_propagation_policy.jobs]
  resource_interpreters = [flotilla_resource_interpreter.job]
  wait_for_rollout      = false
}
`, workers)
	}
	placedWhole := func(*terraform.State) error {
		if w := m.widget(t, "alpha", "job"); w != nil {
			return fmt.Errorf("alpha runs the job, where its leader does not fit beside the workers")
		}
		w := m.widget(t, "beta", "job")
		if w == nil {
			return fmt.Errorf("beta does not run the job")
		}
		if n, _, _ := unstructured.NestedInt64(w.Object, "spec", "workers"); n != 4 {
			return fmt.Errorf("beta runs %d workers, want the template's 4 (placed whole)", n)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("flotilla_manifest.job", tfjsonpath.New("placement"),
						knownvalue.MapExact(map[string]knownvalue.Check{"beta": knownvalue.Int64Exact(0)})),
				}},
				Check: placedWhole,
			},
			{
				Config:      config(8),
				ExpectError: regexp.MustCompile(`(?s)Cannot place Widget job.*alpha: feasible, room for 0 complete sets of its\s+components;\s+beta: feasible, room for 0 complete sets`),
			},
		},
	})
}
