package terraform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// policyErrorCase is a configuration that must fail with a diagnostic that
// names the attribute. want is matched with any whitespace between words, as
// terraform wraps long diagnostics.
type policyErrorCase struct {
	name string
	// typ is the resource type without "flotilla_".
	typ string
	// body is the resource body after name (and namespace, when namespaced).
	body string
	want string
}

// selectWeb is a valid resource_selectors line.
const selectWeb = `resource_selectors = [{ api_version = "apps/v1", kind = "Deployment", name = "web" }]` + "\n"

var policyErrorCases = []policyErrorCase{
	{
		name: "static weight 0", typ: "propagation_policy",
		body: selectWeb + `placement = { replica_scheduling = { weight_preference = { static_weight_list = [
		  { target_cluster = { cluster_names = ["east"] }, weight = 0 },
		] } } }`,
		want: "Attribute placement.replica_scheduling.weight_preference.static_weight_list[0].weight value must be at least 1, got: 0",
	},
	{
		name: "cluster_affinity with cluster_affinities", typ: "propagation_policy",
		body: selectWeb + `placement = {
		  cluster_affinity   = { cluster_names = ["east"] }
		  cluster_affinities = [{ affinity_name = "a", cluster_names = ["west"] }]
		}`,
		want: "placement.cluster_affinities: Forbidden: clusterAffinities cannot co-exist with clusterAffinity",
	},
	{
		name: "spread by region without a cluster constraint", typ: "propagation_policy",
		body: selectWeb + `placement = { spread_constraints = [{ spread_by_field = "region", max_groups = 2 }] }`,
		want: "placement.spread_constraints: Invalid value: 1: the cluster spread constraint must be enabled",
	},
	{
		name: "max_groups below min_groups", typ: "propagation_policy",
		body: selectWeb + `placement = { spread_constraints = [{ spread_by_field = "cluster", min_groups = 3, max_groups = 2 }] }`,
		want: "placement.spread_constraints[0].max_groups: Invalid value: 2: maxGroups lower than minGroups is not allowed",
	},
	{
		name: "spread by field and label", typ: "propagation_policy",
		body: selectWeb + `placement = { spread_constraints = [{ spread_by_field = "cluster", spread_by_label = "team" }] }`,
		want: "placement.spread_constraints[0].spread_by_label: Forbidden: spreadByLabel should not co-exist with spreadByField",
	},
	{
		name: "bad replica scheduling type", typ: "propagation_policy",
		body: selectWeb + `placement = { replica_scheduling = { replica_scheduling_type = "Spread" } }`,
		want: `Attribute placement.replica_scheduling.replica_scheduling_type value must be one of: ["Duplicated" "Divided"], got: "Spread"`,
	},
	{
		name: "rollout stage names unique", typ: "propagation_policy",
		body: selectWeb + `rollout = { stages = [
		  { name = "wave", cluster_affinity = { cluster_names = ["east"] } },
		  { name = "wave" },
		] }`,
		want: `rollout.stages[1].name: Duplicate value: "wave"`,
	},
	{
		name: "rollout: only the last stage takes the rest", typ: "propagation_policy",
		body: selectWeb + `rollout = { stages = [{ name = "rest" }, { name = "canary", cluster_affinity = { cluster_names = ["east"] } }] }`,
		want: "rollout.stages[0].cluster_affinity: Required value: only the last stage may omit clusterAffinity",
	},
	{
		name: "rollout gate timeout", typ: "propagation_policy",
		body: selectWeb + `rollout = { stages = [{ name = "all", gate = { timeout_seconds = 0 } }] }`,
		want: "Attribute rollout.stages[0].gate.timeout_seconds value must be between 1 and 2147483647, got: 0",
	},
	{
		name: "rollout on_gate_failure", typ: "cluster_propagation_policy",
		body: selectWeb + `rollout = { on_gate_failure = "Pause", stages = [{ name = "all" }] }`,
		want: `Attribute rollout.on_gate_failure value must be one of: ["Halt" "Rollback"], got: "Pause"`,
	},
	{
		name: "empty resource_selectors", typ: "propagation_policy",
		body: `resource_selectors = []`,
		want: "Attribute resource_selectors list must contain at least 1 elements, got: 0",
	},
	{
		name: "bad label selector operator", typ: "propagation_policy",
		body: `resource_selectors = [{ api_version = "v1", kind = "ConfigMap", label_selector = {
		  match_expressions = [{ key = "app", operator = "Equals", values = ["web"] }] } }]`,
		want: `Attribute resource_selectors[0].label_selector.match_expressions[0].operator value must be one of`,
	},
	{
		name: "In without values", typ: "propagation_policy",
		body: `resource_selectors = [{ api_version = "v1", kind = "ConfigMap", label_selector = {
		  match_expressions = [{ key = "app", operator = "In" }] } }]`,
		want: "resource_selectors[0].label_selector.match_expressions[0].values: Required value",
	},
	{
		name: "empty kind", typ: "propagation_policy",
		body: `resource_selectors = [{ api_version = "v1", kind = "" }]`,
		want: "resource_selectors[0].kind: Required value",
	},
	{
		name: "dynamic and static weights", typ: "propagation_policy",
		body: selectWeb + `placement = { replica_scheduling = { weight_preference = {
		  dynamic_weight     = "AvailableReplicas"
		  static_weight_list = [{ target_cluster = { cluster_names = ["east"] }, weight = 1 }]
		} } }`,
		want: "placement.replica_scheduling.weight_preference.dynamic_weight: Forbidden: dynamicWeight cannot co-exist with staticWeightList",
	},
	{
		name: "preemption without a template name", typ: "propagation_policy",
		body: `resource_selectors = [{ api_version = "apps/v1", kind = "Deployment" }]
		preemption = "Always"`,
		want: `resource_selectors[0].name: Invalid value: "": name cannot be empty if preemption is Always`,
	},
	{
		name: "bad field selector key", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_affinity = { field_selector = { match_expressions = [
		  { key = "country", operator = "In", values = ["de"] }] } } }`,
		want: `Attribute placement.cluster_affinity.field_selector.match_expressions[0].key value must be one of`,
	},
	{
		name: "toleration seconds without NoExecute", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_tolerations = [{ key = "k", operator = "Exists", effect = "NoSchedule", toleration_seconds = 30 }] }`,
		want: `placement.cluster_tolerations[0].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when`,
	},
	{
		name: "duplicate affinity names", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_affinities = [
		  { affinity_name = "primary", cluster_names = ["east"] },
		  { affinity_name = "primary", cluster_names = ["west"] },
		] }`,
		want: `placement.cluster_affinities[1].affinity_name: Duplicate value: "primary"`,
	},
	{
		name: "overflow affinities with duplicated replicas", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_affinities = [{
		  affinity_name       = "primary"
		  cluster_names       = ["east"]
		  overflow_affinities = [{ affinity_name = "burst", cluster_names = ["west"] }]
		}] }`,
		want: "placement.cluster_affinities[0].overflow_affinities: Invalid value: 1: overflowAffinities can only be used together with dynamic weight or aggregated scheduling",
	},
	{
		name: "affinity name too long", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_affinities = [{ affinity_name = "` + strings.Repeat("a", 33) + `" }] }`,
		want: "Attribute placement.cluster_affinities[0].affinity_name string length must be between 1 and 32, got: 33",
	},
	{
		name: "empty cluster name", typ: "propagation_policy",
		body: selectWeb + `placement = { cluster_affinity = { cluster_names = ["east", ""] } }`,
		want: "placement.cluster_affinity.cluster_names[1]: Required value: cluster name must not be empty",
	},
	{
		name: "priority beyond int32", typ: "propagation_policy",
		body: selectWeb + `priority = 3000000000`,
		want: "Attribute priority value must be between -2147483648 and 2147483647, got: 3000000000",
	},
	{
		name: "invalid policy name", typ: "propagation_policy", body: selectWeb,
		want: `name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`,
	},
	{
		name: "cluster-wide max_groups below min_groups", typ: "cluster_propagation_policy",
		body: selectWeb + `placement = { spread_constraints = [{ min_groups = 2, max_groups = 1 }] }`,
		want: "placement.spread_constraints[0].max_groups: Invalid value: 1: maxGroups lower than minGroups is not allowed",
	},
	{
		name: "plaintext value is not JSON", typ: "override_policy",
		body: `override_rules = [{ overriders = { plaintext = [{ path = "/spec/replicas", operator = "replace", value = "{not json" }] } }]`,
		want: "Attribute override_rules[0].overriders.plaintext[0].value must hold JSON",
	},
	{
		name: "plaintext path without a leading slash", typ: "override_policy",
		body: `override_rules = [{ overriders = { plaintext = [{ path = "spec/replicas", operator = "replace", value = jsonencode(2) }] } }]`,
		want: `override_rules[0].overriders.plaintext[0].path: Invalid value: "spec/replicas": path should be start with / character`,
	},
	{
		name: "plaintext remove with a value", typ: "override_policy",
		body: `override_rules = [{ overriders = { plaintext = [{ path = "/spec/replicas", operator = "remove", value = jsonencode(2) }] } }]`,
		want: "override_rules[0].overriders.plaintext[0].value: Forbidden: value must be empty when operator is remove",
	},
	{
		name: "bogus image component", typ: "override_policy",
		body: `override_rules = [{ overriders = { image_overrider = [{ component = "Digest", operator = "replace", value = "sha256:0" }] } }]`,
		want: `Attribute override_rules[0].overriders.image_overrider[0].component value must be one of: ["Registry" "Repository" "Tag"], got: "Digest"`,
	},
	{
		name: "image replace without a value", typ: "override_policy",
		body: `override_rules = [{ overriders = { image_overrider = [{ component = "Tag", operator = "replace" }] } }]`,
		want: "override_rules[0].overriders.image_overrider[0].value: Required value: must not be empty when operator is add or replace",
	},
	{
		name: "command overrider replace", typ: "override_policy",
		body: `override_rules = [{ overriders = { command_overrider = [{ container_name = "web", operator = "replace", value = ["x"] }] } }]`,
		want: `Attribute override_rules[0].overriders.command_overrider[0].operator value must be one of: ["add" "remove"], got: "replace"`,
	},
	{
		name: "field overrider with json and yaml", typ: "override_policy",
		body: `override_rules = [{ overriders = { field_overrider = [{
		  field_path = "/data/config"
		  json       = [{ sub_path = "/a", operator = "remove" }]
		  yaml       = [{ sub_path = "/a", operator = "remove" }]
		}] } }]`,
		want: "override_rules[0].overriders.field_overrider[0].yaml: Forbidden: json and yaml cannot be set together",
	},
	{
		name: "field overrider with neither json nor yaml", typ: "override_policy",
		body: `override_rules = [{ overriders = { field_overrider = [{ field_path = "/data/config" }] } }]`,
		want: "override_rules[0].overriders.field_overrider[0]: Required value: one of json or yaml must be set",
	},
	{
		name: "invalid label key", typ: "override_policy",
		body: `override_rules = [{ overriders = { labels_overrider = [{ operator = "add", value = { "bad key!" = "x" } }] } }]`,
		want: `override_rules[0].overriders.labels_overrider[0].value: Invalid value: "bad key!"`,
	},
	{
		name: "cluster-wide target cluster with bad operator", typ: "cluster_override_policy",
		body: `override_rules = [{
		  target_cluster = { field_selector = { match_expressions = [{ key = "zone", operator = "Exists" }] } }
		  overriders     = { annotations_overrider = [{ operator = "add", value = { a = "b" } }] }
		}]`,
		want: `Attribute override_rules[0].target_cluster.field_selector.match_expressions[0].operator value must be one of: ["In" "NotIn"], got: "Exists"`,
	},
	{
		name: "missing required attribute", typ: "override_policy",
		body: `override_rules = [{ overriders = { image_overrider = [{ operator = "replace", value = "x" }] } }]`,
		want: `attribute "component" is required`,
	},
}

func TestPolicyResourceErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range policyErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			k := policyKindByType(t, tc.typ)
			name := "web"
			if tc.name == "invalid policy name" {
				name = "Web_1"
			}
			head := fmt.Sprintf("name = %q\n", name)
			if k.namespaced {
				head += "namespace = \"default\"\n"
			}
			resource.UnitTest(t, resource.TestCase{
				ProtoV6ProviderFactories: policyTestProviders,
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("resource \"flotilla_%s\" \"test\" {\n%s%s\n}\n", tc.typ, head, tc.body),
					PlanOnly:    true,
					ExpectError: wrappedMessage(tc.want),
				}},
			})
		})
	}
}

// policyKindByType returns the kind of resource type typ (without "flotilla_").
func policyKindByType(t *testing.T, typ string) policyKind {
	t.Helper()
	for _, k := range []policyKind{propagationPolicyKind, clusterPropagationPolicyKind, overridePolicyKind, clusterOverridePolicyKind} {
		if k.typeName == typ {
			return k
		}
	}
	t.Fatalf("no policy resource %q", typ)
	return policyKind{}
}
