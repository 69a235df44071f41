package terraform

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const overridePolicyEU = `
resource "flotilla_override_policy" "eu" {
  name      = "eu"
  namespace = "default"
  resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]
  override_rules = [
    {
      target_cluster = { field_selector = { match_expressions = [{ key = "region", operator = "In", values = ["eu-west"] }] } }
      overriders = {
        image_overrider      = [{ component = "Registry", operator = "replace", value = %q }]
        plaintext            = [{ path = "/spec/replicas", operator = "replace", value = jsonencode(2) }]
        labels_overrider     = [{ operator = "add", value = { "example.com/region" = "eu" } }]
        annotations_overrider = [{ operator = "remove", value = { "example.com/debug" = "" } }]
        command_overrider    = [{ container_name = "web", operator = "add", value = ["--eu"] }]
        args_overrider       = [{ container_name = "web", operator = "remove", value = ["--verbose"] }]
        field_overrider = [{
          field_path = "/data/config.json"
          json       = [{ sub_path = "/log", operator = "replace", value = jsonencode({ level = "info", sinks = ["stdout"] }) }]
        }]
      }
    },
    {
      overriders = {
        image_overrider = [{ predicate = { path = "/spec/template/spec/containers/0/image" }, component = "Tag", operator = "add", value = "-eu" }]
        field_overrider = [{ field_path = "/data/app.yaml", yaml = [{ sub_path = "/mode", operator = "add", value = jsonencode("strict") }] }]
      }
    },
  ]
}
`

const overridePolicyEUYAML = `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: eu, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
    - targetCluster:
        fieldSelector:
          matchExpressions: [{key: region, operator: In, values: [eu-west]}]
      overriders:
        imageOverrider: [{component: Registry, operator: replace, value: registry.eu.example.com}]
        plaintext: [{path: /spec/replicas, operator: replace, value: 2}]
        labelsOverrider: [{operator: add, value: {example.com/region: eu}}]
        annotationsOverrider: [{operator: remove, value: {example.com/debug: ""}}]
        commandOverrider: [{containerName: web, operator: add, value: [--eu]}]
        argsOverrider: [{containerName: web, operator: remove, value: [--verbose]}]
        fieldOverrider:
          - fieldPath: /data/config.json
            json:
              - subPath: /log
                operator: replace
                value: {level: info, sinks: [stdout]}
    - overriders:
        imageOverrider:
          - predicate: {path: /spec/template/spec/containers/0/image}
            component: Tag
            operator: add
            value: -eu
        fieldOverrider:
          - fieldPath: /data/app.yaml
            yaml: [{subPath: /mode, operator: add, value: strict}]
`

func TestOverridePolicyResource(t *testing.T) {
	t.Parallel()
	addr := "flotilla_override_policy.eu"
	registry := tfjsonpath.New("override_rules").AtSliceIndex(0).AtMapKey("overriders").
		AtMapKey("image_overrider").AtSliceIndex(0).AtMapKey("value")
	yamlFile := writePolicyFile(t, "eu.yaml", overridePolicyEUYAML)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: policyTestProviders,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(overridePolicyEU, "registry.eu.example.com"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact("default/eu")),
						plancheck.ExpectKnownValue(addr, tfjsonpath.New("kind"), knownvalue.StringExact("OverridePolicy")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, registry, knownvalue.StringExact("registry.eu.example.com")),
				},
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateId:     yamlFile + ":default/eu",
				ImportStateVerify: true,
			},
			{
				Config: fmt.Sprintf(overridePolicyEU, "mirror.eu.example.com"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, registry, knownvalue.StringExact("mirror.eu.example.com")),
				},
			},
		},
	})
}

const clusterPoliciesConfig = `
resource "flotilla_cluster_propagation_policy" "platform" {
  name = "platform"
  resource_selectors = [
    { api_version = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition" },
    { api_version = "v1", kind = "Namespace", label_selector = { match_labels = { "example.com/fleet-wide" = "true" } } },
  ]
  priority   = %d
  preemption = "Never"
  placement = {
    cluster_affinities = [
      { affinity_name = "primary", field_selector = { match_expressions = [{ key = "region", operator = "In", values = ["us-east"] }] } },
      { affinity_name = "dr", cluster_names = ["dr-west"] },
    ]
    cluster_tolerations = [{ operator = "Exists" }]
  }
  preserve_resources_on_deletion = true
}

resource "flotilla_cluster_override_policy" "staging" {
  name = "staging-debug"
  override_rules = [{
    target_cluster = { label_selector = { match_labels = { env = "staging" } } }
    overriders     = { args_overrider = [{ container_name = "web", operator = "add", value = ["--log-level=debug"] }] }
  }]
}
`

const clusterPoliciesYAML = `
apiVersion: v1
kind: List
items:
  - apiVersion: policy.karmada.io/v1alpha1
    kind: ClusterPropagationPolicy
    metadata: {name: platform}
    spec:
      resourceSelectors:
        - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition}
        - {apiVersion: v1, kind: Namespace, labelSelector: {matchLabels: {example.com/fleet-wide: "true"}}}
      priority: 10
      preemption: Never
      schedulerName: default-scheduler
      placement:
        clusterAffinities:
          - affinityName: primary
            fieldSelector:
              matchExpressions: [{key: region, operator: In, values: [us-east]}]
          - {affinityName: dr, clusterNames: [dr-west]}
        clusterTolerations: [{operator: Exists}]
      preserveResourcesOnDeletion: true
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: staging-debug}
spec:
  overrideRules:
    - targetCluster: {labelSelector: {matchLabels: {env: staging}}}
      overriders:
        argsOverrider: [{containerName: web, operator: add, value: [--log-level=debug]}]
`

func TestClusterPolicyResources(t *testing.T) {
	t.Parallel()
	cpp, cop := "flotilla_cluster_propagation_policy.platform", "flotilla_cluster_override_policy.staging"
	yamlFile := writePolicyFile(t, "cluster.yaml", clusterPoliciesYAML)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: policyTestProviders,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(clusterPoliciesConfig, 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(cpp, tfjsonpath.New("id"), knownvalue.StringExact("platform")),
						plancheck.ExpectKnownValue(cpp, tfjsonpath.New("kind"), knownvalue.StringExact("ClusterPropagationPolicy")),
						plancheck.ExpectKnownValue(cop, tfjsonpath.New("id"), knownvalue.StringExact("staging-debug")),
						plancheck.ExpectKnownValue(cop, tfjsonpath.New("kind"), knownvalue.StringExact("ClusterOverridePolicy")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{ResourceName: cpp, ImportState: true, ImportStateId: yamlFile + ":platform", ImportStateVerify: true},
			{ResourceName: cop, ImportState: true, ImportStateId: yamlFile + ":staging-debug", ImportStateVerify: true},
			{
				Config: fmt.Sprintf(clusterPoliciesConfig, 20),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(cpp, plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction(cop, plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(cpp, tfjsonpath.New("priority"), knownvalue.Int64Exact(20)),
				},
			},
		},
	})
}
