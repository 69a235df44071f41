package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// writePolicyFile writes content to name in a fresh temporary directory and
// returns its path.
func writePolicyFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const propagationPolicyWeb = `
resource "flotilla_propagation_policy" "web" {
  name      = "web"
  namespace = "default"
  resource_selectors = [
    { api_version = "apps/v1", kind = "Deployment", name = "web" },
    { api_version = "v1", kind = "ConfigMap", label_selector = { match_expressions = [{ key = "app", operator = "In", values = ["web"] }] } },
  ]
  propagate_deps      = true
  priority            = 5
  conflict_resolution = "Overwrite"
  placement = {
    cluster_affinity = {
      label_selector = { match_labels = { tier = "prod" } }
      field_selector = { match_expressions = [{ key = "region", operator = "NotIn", values = ["ap-south"] }] }
      exclude        = ["canary"]
    }
    cluster_tolerations = [{ key = "maintenance", operator = "Exists", effect = "NoExecute", toleration_seconds = 60 }]
    spread_constraints  = [{ spread_by_field = "cluster", min_groups = 1, max_groups = 3 }]
    replica_scheduling = {
      replica_scheduling_type     = "Divided"
      replica_division_preference = "Weighted"
      weight_preference = {
        static_weight_list = [
          { target_cluster = { cluster_names = ["east"] }, weight = %d },
          { target_cluster = { cluster_names = ["west"] }, weight = 2 },
        ]
      }
    }
  }
}
`

// propagationPolicyWebYAML is propagationPolicyWeb with weight 1, as Karmada YAML.
const propagationPolicyWebYAML = `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: default
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: web}
    - apiVersion: v1
      kind: ConfigMap
      labelSelector:
        matchExpressions: [{key: app, operator: In, values: [web]}]
  propagateDeps: true
  priority: 5
  conflictResolution: Overwrite
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {tier: prod}}
      fieldSelector:
        matchExpressions: [{key: region, operator: NotIn, values: [ap-south]}]
      exclude: [canary]
    clusterTolerations:
      - {key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
    spreadConstraints:
      - {spreadByField: cluster, minGroups: 1, maxGroups: 3}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [east]}, weight: 1}
          - {targetCluster: {clusterNames: [west]}, weight: 2}
`

func TestPropagationPolicyResource(t *testing.T) {
	t.Parallel()
	addr := "flotilla_propagation_policy.web"
	weight := tfjsonpath.New("placement").AtMapKey("replica_scheduling").AtMapKey("weight_preference").
		AtMapKey("static_weight_list").AtSliceIndex(0).AtMapKey("weight")
	// A second document of another kind and a policy in another namespace
	// must not confuse the lookup.
	yamlFile := writePolicyFile(t, "policies.yaml", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n"+
		"metadata: {name: web, namespace: other}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Secret}]\n---\n"+
		propagationPolicyWebYAML)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: policyTestProviders,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(propagationPolicyWeb, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						// Known at plan time, so a manifest planned in the same run sees the policy.
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("default/web")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("kind"), knownvalue.StringExact("PropagationPolicy")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, weight, knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("preemption"), knownvalue.Null()),
				},
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     yamlFile + ":default/web",
				ImportStateVerify: true,
			},
			{
				Config: fmt.Sprintf(propagationPolicyWeb, 4),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(addr, weight, knownvalue.Int64Exact(4))},
			},
			{
				Config: regexp.MustCompile(`name      = "web"`).ReplaceAllString(fmt.Sprintf(propagationPolicyWeb, 4), `name = "web-v2"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionReplace),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("default/web-v2")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}
