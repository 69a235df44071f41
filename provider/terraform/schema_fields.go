package terraform

import (
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// The tables below are keyed by "GoType.jsonName", the type that declares
// the field and its Karmada name. Tests fail when a generated attribute has no
// description, or when a key matches no field.

// skippedField is a Karmada field the policy resources leave out.
type skippedField struct {
	// reason is shown in the resource documentation and in import warnings.
	reason string
	// harmless is a value not worth a warning on import (a Karmada default
	// that kubectl get prints back, for instance).
	harmless string
}

// skippedFields are the Karmada fields with no attribute: deprecated ones,
// ones that need a control plane running between Terraform runs, and ones
// no front end supports. Keys are fields of the spec types or of the types
// in skippedParents.
var skippedFields = map[string]skippedField{
	"PropagationSpec.association": {reason: "deprecated in Karmada and read by none of its controllers; `true` is " +
		"refused in every front end (`import` included); use `propagate_deps`"},
	"PropagationSpec.schedulerName": {
		reason: "flotilla embeds a single scheduler; a policy naming another leaves its templates unscheduled until that " +
			"scheduler acts (Karmada's behaviour, which the `controlplane` honours), and a Terraform plan has no other scheduler to wait for",
		harmless: api.DefaultSchedulerName,
	},
	"PropagationSpec.failover": {reason: "failover reacts to cluster and application health between runs, which needs a " +
		"running control plane; Terraform applies are point-in-time"},
	"PropagationSpec.activationPreference": {reason: "`Lazy` defers policy changes until the template changes, but " +
		"`terraform plan` must show what `apply` does"},
	"PropagationSpec.schedulePriority": {reason: "it orders the control plane's scheduling queue (the `controlplane` honours it); " +
		"a plan schedules every template at once, so it would change no placement"},
	"Placement.workloadAffinity": {reason: api.WorkloadAffinityRefusal},
	"OverrideSpec.targetCluster": {reason: "deprecated in Karmada; use `override_rules[*].target_cluster`"},
	"OverrideSpec.overriders":    {reason: "deprecated in Karmada; use `override_rules[*].overriders`"},
}

// skippedParents are the nested types whose fields may be skipped, with
// their path under spec.
var skippedParents = map[string]string{"Placement": "placement"}

// skippedSpecPath is the path under spec of a skippedFields key, and
// whether it belongs to a policy whose spec type is specType.
func skippedSpecPath(key, specType string) (string, bool) {
	typ, name, _ := strings.Cut(key, ".")
	if typ == specType {
		return name, true
	}
	parent, nested := skippedParents[typ]
	return parent + "." + name, nested && specType == reflect.TypeFor[api.PropagationSpec]().Name()
}

// skippedFieldAt is the skipped field at path (under spec) of a policy
// whose spec type is specType.
func skippedFieldAt(path, specType string) (skippedField, bool) {
	for key, f := range skippedFields {
		if p, ok := skippedSpecPath(key, specType); ok && p == path {
			return f, true
		}
	}
	return skippedField{}, false
}

// enumOf accepts only the given values, Karmada's enum.
func enumOf[T ~string](vs ...T) attrConstraint {
	c := attrConstraint{}
	for _, v := range vs {
		c.oneOf = append(c.oneOf, string(v))
	}
	return c
}

// minOf accepts integers of at least n.
func minOf(n int64) attrConstraint { return attrConstraint{min: &n} }

// fieldConstraints are the per-attribute constraints beyond type and
// required-ness: Karmada's enums and bounds.
var fieldConstraints = map[string]attrConstraint{
	"PropagationSpec.resourceSelectors":                   {minItems: 1},
	"PropagationSpec.preemption":                          enumOf(api.PreemptAlways, api.PreemptNever),
	"PropagationSpec.conflictResolution":                  enumOf(api.ConflictAbort, api.ConflictOverwrite),
	"LabelSelectorRequirement.operator":                   enumOf(metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist),
	"NodeSelectorRequirement.key":                         enumOf(api.ProviderField, api.RegionField, api.ZoneField),
	"NodeSelectorRequirement.operator":                    enumOf(corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn),
	"ClusterAffinityTerm.affinityName":                    {minLen: 1, maxLen: 32},
	"OverflowClusterAffinity.affinityName":                {minLen: 1, maxLen: 32},
	"Toleration.operator":                                 enumOf(corev1.TolerationOpEqual, corev1.TolerationOpExists),
	"Toleration.effect":                                   enumOf(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute),
	"SpreadConstraint.spreadByField":                      enumOf(api.SpreadByFieldCluster, api.SpreadByFieldRegion, api.SpreadByFieldZone, api.SpreadByFieldProvider),
	"SpreadConstraint.maxGroups":                          minOf(0),
	"SpreadConstraint.minGroups":                          minOf(0),
	"ReplicaSchedulingStrategy.replicaSchedulingType":     enumOf(api.ReplicaSchedulingTypeDuplicated, api.ReplicaSchedulingTypeDivided),
	"ReplicaSchedulingStrategy.replicaDivisionPreference": enumOf(api.ReplicaDivisionPreferenceAggregated, api.ReplicaDivisionPreferenceWeighted),
	"ClusterPreferences.dynamicWeight":                    enumOf(api.DynamicWeightByAvailableReplicas),
	"StaticClusterWeight.weight":                          minOf(1),
	"PlaintextOverrider.operator":                         enumOf(api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace),
	"ImageOverrider.component":                            enumOf(api.Registry, api.Repository, api.Tag),
	"ImageOverrider.operator":                             enumOf(api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace),
	"CommandArgsOverrider.operator":                       enumOf(api.OverriderOpAdd, api.OverriderOpRemove),
	"LabelAnnotationOverrider.operator":                   enumOf(api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace),
	"JSONPatchOperation.operator":                         enumOf(api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace),
	"YAMLPatchOperation.operator":                         enumOf(api.OverriderOpAdd, api.OverriderOpRemove, api.OverriderOpReplace),
	"RolloutStrategy.stages":                              {minItems: 1},
	"RolloutStrategy.onGateFailure":                       enumOf(api.RolloutHalt, api.RolloutRollback),
	"RolloutStage.name":                                   {minLen: 1, maxLen: 63},
	"RolloutStage.maxConcurrentClusters":                  minOf(1),
	"RolloutGate.bakeSeconds":                             minOf(0),
	"RolloutGate.maxUnhealthyClusters":                    minOf(0),
	"RolloutGate.timeoutSeconds":                          minOf(1),
}

const jsonValueDescription = "JSON value to set, as a string: write `jsonencode(...)`, for example `jsonencode(3)` " +
	"or `jsonencode({ level = \"debug\" })`. Must be unset for `remove`."

// fieldDescriptions describe every attribute, with Karmada's semantics.
var fieldDescriptions = map[string]string{
	// Resource interpreter customization.
	"ResourceInterpreterCustomizationSpec.target":         "The kind the scripts interpret: one `api_version` and `kind`, as in Karmada.",
	"ResourceInterpreterCustomizationSpec.customizations": "The scripts, one per operation; an operation without a script keeps flotilla's built-in rule.",
	"CustomizationTarget.apiVersion":                      "Group and version of the target kind, for example `argoproj.io/v1alpha1`.",
	"CustomizationTarget.kind":                            "The target kind, for example `Rollout`.",
	"CustomizationRules.retention":                        "Fields the members own: defines `Retain(desiredObj, observedObj)`, which returns the object to apply.",
	"CustomizationRules.replicaResource":                  "Replicas and per-replica requirements: defines `GetReplicas(obj)`, so the kind's replicas can be divided among clusters.",
	"CustomizationRules.componentResource": "Components of a multi-component workload (a FlinkDeployment's JobManager and TaskManagers): defines `GetComponents(obj)`, " +
		"which returns each component's name, replicas and per-replica requirements. The kind is then placed whole, never divided: with a placement of " +
		"exactly one cluster (a spread constraint by cluster with min and max groups 1) and a strategy that weighs capacity (`Divided` with `Aggregated` or dynamic weights), on a cluster where every component fits, " +
		"as Karmada's MultiplePodTemplatesScheduling does. It takes precedence over `replica_resource`.",
	"CustomizationRules.replicaRevision":          "Writes a cluster's share: defines `ReviseReplica(obj, desiredReplica)`.",
	"CustomizationRules.statusReflection":         "What of a member's object is collected: defines `ReflectStatus(observedObj)`.",
	"CustomizationRules.statusAggregation":        "Folds the members' statuses into one: defines `AggregateStatus(desiredObj, statusItems)`.",
	"CustomizationRules.healthInterpretation":     "Whether a member's object is healthy: defines `InterpretHealth(observedObj)`.",
	"CustomizationRules.dependencyInterpretation": "Objects that follow the workload: defines `GetDependencies(desiredObj)`.",
	"LuaScript.luaScript":                         "The Lua source. It runs in a sandbox (no os, io or file access) with an instruction and memory budget; Karmada's `kube` library is available with `require(\"kube\")`.",
	// FederatedResourceQuota.
	"FederatedResourceQuotaSpec.overall": "The namespace's limit in every cluster together, per resource name (`cpu`, `memory`, " +
		"`requests.cpu`, `limits.memory`, `pods`, ...), as quantities: `{ cpu = \"8\", memory = \"16Gi\" }`. A template is charged " +
		"its replicas times its per-replica requests; `requests.X` is charged as `X`.",
	"FederatedResourceQuotaSpec.staticAssignments": "Per-cluster limits, each applied as a ResourceQuota named after this quota in " +
		"the namespace of its cluster. A cluster not listed gets none. Together they may not exceed `overall`.",
	"StaticClusterAssignment.clusterName": "The member cluster; it must be among `clusters` and listed once.",
	"StaticClusterAssignment.hard":        "The cluster's ResourceQuota `spec.hard`, as quantities; only resource names `overall` limits.",
	// Propagation.
	"PropagationSpec.resourceSelectors": "Templates this policy propagates; a template matching any selector is selected. " +
		"At least one is required: an empty list never means \"everything\", so nothing is propagated by accident.",
	"PropagationSpec.propagateDeps": "Whether the objects a selected workload references (ConfigMaps, Secrets, " +
		"ServiceAccounts, PersistentVolumeClaims) follow it to the same clusters. Defaults to `false`.",
	"PropagationSpec.placement": "Where the selected templates go: the candidate clusters, how groups of clusters are " +
		"spread, and how replicas are divided. When unset every cluster is a candidate and gets all replicas.",
	"PropagationSpec.priority": "Decides between policies of the same scope that select the same template: higher wins. " +
		"Defaults to 0. A namespaced policy beats a cluster-wide one whatever the priorities.",
	"PropagationSpec.preemption": "Whether this policy may take templates already claimed by a lower-priority policy: " +
		"`Always` or `Never` (the default). With `Always` every resource selector must name its template.",
	"PropagationSpec.conflictResolution": "What happens when the object already exists in a member cluster and flotilla " +
		"does not own it: `Abort` (the default) refuses to touch it, `Overwrite` takes it over.",
	"PropagationSpec.preserveResourcesOnDeletion": "When `true`, the objects in member clusters are kept when the " +
		"template is deleted, for example by destroying the `flotilla_manifest`. Defaults to `false`.",
	"PropagationSpec.suspension": "Holds dispatch back, as Karmada does: the selected clusters are still scheduled and " +
		"rendered (a `flotilla_manifest` shows them in `placement`, `rendered` and `suspended_clusters`), but nothing is " +
		"applied to or removed from them until the suspension is lifted.",
	"Suspension.dispatching": "When `true`, dispatch to every cluster is held back. Cannot be set together with " +
		"`dispatching_on_clusters`.",
	"Suspension.dispatchingOnClusters": "Holds dispatch back to the named clusters only.",
	"SuspendClusters.clusterNames":     "Names of the clusters dispatch is held back to.",
	"PropagationSpec.dependentOverrides": "Names of override policies the propagation waits for, Karmada's " +
		"`dependentOverrides`: `flotilla_override_policy` names in the policy's namespace (cluster-wide ones for a cluster-wide " +
		"policy). A `flotilla_manifest` this policy claims refuses to plan while one is not among its `override_policies`.",

	"PropagationSpec.rollout": "Stages a change of the selected templates across their clusters (a flotilla extension; " +
		"Karmada has none): a canary stage first, a health gate after each stage, then the next stage. A `flotilla_manifest` " +
		"this policy claims shows the stages in `stages`, and apply goes stage by stage. Unset: every cluster updates at once, " +
		"as in Karmada. See the staged rollouts guide.",
	"RolloutStrategy.stages": "The stages, in order: 1 to 10, names unique. A cluster belongs to the first stage that " +
		"selects it; scheduled clusters no stage selects form an implicit last stage named `remaining` with the default gate.",
	"RolloutStrategy.onGateFailure": "What a failed gate does: `Halt` (the default) stops, and later stages keep what they " +
		"ran before; `Rollback` first puts the failed stage's updated clusters back on what they ran before, then stops.",
	"RolloutStage.name": "The stage's name in plans, status and errors: a DNS-1123 label (lower case letters, digits " +
		"and `-`), unique in the rollout, and not `remaining`.",
	"RolloutStage.clusterAffinity": "Selects the stage's clusters among the scheduled ones, as `placement.cluster_affinity` " +
		"does. Unset takes every scheduled cluster no earlier stage took; only the last stage may leave it unset.",
	"RolloutStage.maxConcurrentClusters": "How many of the stage's clusters update at once: the stage runs in batches of " +
		"this size, in cluster-name order, each batch gated like the stage. Unset: all at once. At least 1.",
	"RolloutStage.gate": "The health check after the stage (or each batch) before the next one starts. Unset: every " +
		"updated cluster healthy within 600 seconds, no bake time.",
	"RolloutGate.bakeSeconds": "Seconds every updated cluster must stay healthy (Karmada's health rules, as apply's " +
		"wait uses them) before the gate passes. Defaults to 0.",
	"RolloutGate.maxUnhealthyClusters": "How many clusters of the stage (or batch) may be unhealthy when the gate is " +
		"judged. Defaults to 0.",
	"RolloutGate.timeoutSeconds": "Seconds the updated clusters have to become healthy before the gate fails. Defaults " +
		"to 600; at least 1. The resource's create or update timeout bounds the whole apply.",

	"ResourceSelector.apiVersion": "API version of the selected templates, for example `apps/v1`.",
	"ResourceSelector.kind":       "Kind of the selected templates, for example `Deployment`.",
	"ResourceSelector.namespace": "Namespace of the selected templates. Unset means the policy's own namespace for a " +
		"namespaced policy and any namespace for a cluster-wide one.",
	"ResourceSelector.name": "Name of the selected template. Unset selects every template of the kind; when set, " +
		"`label_selector` is ignored.",
	"ResourceSelector.labelSelector": "Selects templates by their labels. Ignored when `name` is set.",

	"LabelSelector.matchLabels":         "Labels that must all be present with exactly these values.",
	"LabelSelector.matchExpressions":    "Label requirements that must all hold, in addition to `match_labels`.",
	"LabelSelectorRequirement.key":      "Label key the requirement is about.",
	"LabelSelectorRequirement.operator": "`In`, `NotIn`, `Exists` or `DoesNotExist`.",
	"LabelSelectorRequirement.values": "Label values: at least one for `In` and `NotIn`, none for `Exists` and " +
		"`DoesNotExist`.",

	"Placement.clusterAffinity": "Restricts the candidate clusters. Cannot be set together with `cluster_affinities`; " +
		"when neither is set every cluster is a candidate.",
	"Placement.clusterAffinities": "Ordered groups of clusters: the scheduler uses the first group that can hold the " +
		"template and falls back to the next one otherwise. Cannot be set together with `cluster_affinity`.",
	"Placement.clusterTolerations": "Tolerations that let the templates land on clusters with matching taints.",
	"Placement.spreadConstraints": "Bounds on how many groups of clusters (clusters, regions, zones, providers or values " +
		"of a label) are chosen. Spreading by any field also needs a constraint with `spread_by_field = \"cluster\"`.",
	"Placement.replicaScheduling": "How replicas are assigned to the chosen clusters. When unset every chosen cluster " +
		"gets all replicas (`Duplicated`).",

	"ClusterAffinity.labelSelector":    "Selects clusters by their labels.",
	"ClusterAffinity.fieldSelector":    "Selects clusters by `provider`, `region` or `zone`.",
	"ClusterAffinity.clusterNames":     "Clusters that may be chosen; unset allows any cluster.",
	"ClusterAffinity.exclude":          "Clusters that are never chosen, whatever else matches.",
	"FieldSelector.matchExpressions":   "Requirements on the cluster's provider, region or zone; all must hold.",
	"NodeSelectorRequirement.key":      "Cluster field: `provider`, `region` or `zone`.",
	"NodeSelectorRequirement.operator": "`In` or `NotIn`.",
	"NodeSelectorRequirement.values":   "Values of the field; at least one.",

	"ClusterAffinityTerm.affinityName": "Name of this group: 1 to 32 characters, unique within the policy.",
	"ClusterAffinityTerm.overflowAffinities": "Further groups, in order, that replicas overflow into when the primary " +
		"group runs out of room; scale-down drains them in reverse order (Karmada v1.18). Only valid with `Divided` " +
		"replicas by dynamic weight or `Aggregated`, and only when the group itself selects clusters.",
	"OverflowClusterAffinity.affinityName": "Name of this overflow group: 1 to 32 characters, unique within the term " +
		"and different from the term's `affinity_name`.",

	"Toleration.key":      "Taint key the toleration matches; unset, with `operator = \"Exists\"`, matches every taint.",
	"Toleration.operator": "`Equal` (the default) matches the taint's `value`; `Exists` matches any value.",
	"Toleration.value":    "Taint value matched by `Equal`; must be unset with `Exists`.",
	"Toleration.effect": "Taint effect matched: `NoSchedule`, `PreferNoSchedule` or `NoExecute`; unset matches every " +
		"effect.",
	"Toleration.tolerationSeconds": "With effect `NoExecute`, how long the templates may stay on a cluster after the " +
		"taint appears; unset tolerates it forever.",

	"SpreadConstraint.spreadByField": "Cluster field whose values form the groups: `cluster`, `region`, `zone` or " +
		"`provider`. Exclusive with `spread_by_label`; `cluster` when neither is set.",
	"SpreadConstraint.spreadByLabel": "Cluster label key whose values form the groups. Exclusive with `spread_by_field`.",
	"SpreadConstraint.maxGroups":     "Most groups to choose; 0 or unset is no limit. Must not be lower than `min_groups`.",
	"SpreadConstraint.minGroups":     "Fewest groups to choose; defaults to 1.",

	"ReplicaSchedulingStrategy.replicaSchedulingType": "`Duplicated` gives every chosen cluster all replicas; " +
		"`Divided` splits the replicas between them. Defaults to `Divided` once `replica_scheduling` is set.",
	"ReplicaSchedulingStrategy.replicaDivisionPreference": "How `Divided` replicas are split: `Aggregated` packs them " +
		"into as few clusters as can hold them, `Weighted` (the default) splits them by `weight_preference`.",
	"ReplicaSchedulingStrategy.weightPreference": "Weights for `Weighted` division, static or dynamic. When unset " +
		"every chosen cluster weighs the same.",
	"ClusterPreferences.staticWeightList": "Static weights, each for the clusters its `target_cluster` selects. Cannot " +
		"be set together with `dynamic_weight`.",
	"ClusterPreferences.dynamicWeight": "Weights from live capacity: `AvailableReplicas` weighs each cluster by how " +
		"many more replicas it can hold.",
	"StaticClusterWeight.targetCluster": "Clusters this weight applies to.",
	"StaticClusterWeight.weight": "Relative weight, at least 1. Replicas are divided in proportion to the weights " +
		"(Webster / Sainte-Laguë).",

	// Override.
	"OverrideSpec.resourceSelectors": "Templates this policy changes. Unset selects every template the policy can see: " +
		"those in its namespace, or all of them for a cluster-wide policy.",
	"OverrideSpec.overrideRules":    "Rules applied in order, each to the clusters its `target_cluster` selects.",
	"RuleWithCluster.targetCluster": "Clusters this rule applies to; unset applies it to every cluster.",
	"RuleWithCluster.overriders": "Changes this rule makes. They apply in the order image, command, args, labels, " +
		"annotations, field, plaintext.",
	"Overriders.plaintext":            "JSON patch operations on the object.",
	"Overriders.imageOverrider":       "Changes to one part (registry, repository or tag) of container images.",
	"Overriders.commandOverrider":     "Items added to or removed from a container's `command`.",
	"Overriders.argsOverrider":        "Items added to or removed from a container's `args`.",
	"Overriders.labelsOverrider":      "Labels added, removed or replaced in `metadata.labels`.",
	"Overriders.annotationsOverrider": "Annotations added, removed or replaced in `metadata.annotations`.",
	"Overriders.fieldOverrider": "Patches to JSON or YAML text held in one string field, such as a ConfigMap data " +
		"entry.",
	"PlaintextOverrider.path":     "JSON pointer (RFC 6901) to the field, starting with `/`, for example `/spec/replicas`.",
	"PlaintextOverrider.operator": "`add`, `remove` or `replace`.",
	"PlaintextOverrider.value":    jsonValueDescription,
	"ImageOverrider.predicate": "Which image to change. Unset changes every container and init container image of " +
		"a well-known workload kind (Pod, Deployment, ReplicaSet, StatefulSet, ...).",
	"ImageOverrider.component": "Part of the image reference `[registry/]repository[:tag]` to change: `Registry`, " +
		"`Repository` or `Tag`.",
	"ImageOverrider.operator":            "`add` appends `value` to the component, `replace` sets it, `remove` deletes it.",
	"ImageOverrider.value":               "New text of the component; required for `add` and `replace`, ignored for `remove`.",
	"ImagePredicate.path":                "JSON pointer to the image string, for example `/spec/template/spec/containers/0/image`.",
	"CommandArgsOverrider.containerName": "Container whose command or args change.",
	"CommandArgsOverrider.operator":      "`add` appends the items of `value`; `remove` deletes them.",
	"CommandArgsOverrider.value":         "Items appended or removed.",
	"LabelAnnotationOverrider.operator":  "`add`, `remove` or `replace`.",
	"LabelAnnotationOverrider.value": "Keys and values to add or replace; for `remove`, the keys to remove (values " +
		"are ignored).",
	"FieldOverrider.fieldPath": "JSON pointer to the string field that holds JSON or YAML, for example " +
		"`/data/config.json` (a `~1` stands for a `/` in a key).",
	"FieldOverrider.json":         "Operations on a field that holds JSON. Exclusive with `yaml`.",
	"FieldOverrider.yaml":         "Operations on a field that holds YAML. Exclusive with `json`.",
	"JSONPatchOperation.subPath":  "JSON pointer inside the field's document, starting with `/`.",
	"JSONPatchOperation.operator": "`add`, `remove` or `replace`.",
	"JSONPatchOperation.value":    jsonValueDescription,
	"YAMLPatchOperation.subPath":  "JSON pointer inside the field's document, starting with `/`.",
	"YAMLPatchOperation.operator": "`add`, `remove` or `replace`.",
	"YAMLPatchOperation.value":    jsonValueDescription,
}
