package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// paths renders errors as "path: type" so tables can list them exactly.
func paths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+e.Type.String())
	}
	return out
}

// web is a valid policy to break one rule at a time.
func web() *apitest.PropagationPolicyWrapper {
	return apitest.MakePropagationPolicy("web", "prod").SelectName("apps/v1", "Deployment", "web")
}

func TestValidatePropagationPolicy(t *testing.T) {
	const (
		req  = "Required value"
		inv  = "Invalid value"
		uns  = "Unsupported value"
		forb = "Forbidden"
		dup  = "Duplicate value"
		long = "Too long"
	)
	aff := apitest.MakeAffinity
	overflow := []api.OverflowClusterAffinity{{AffinityName: "cloud", ClusterAffinity: *aff().Names("c").Obj()}}
	cases := map[string]struct {
		policy *api.PropagationPolicy
		want   []string
	}{
		"valid": {
			policy: web().Weight(1, "east").Weight(2, "west").Spread(api.SpreadByFieldRegion, 1, 2).Spread(api.SpreadByFieldCluster, 1, 0).Obj(),
		},
		"association true is refused by name (Karmada deprecated it and reads it nowhere)": {
			policy: func() *api.PropagationPolicy { p := web().Obj(); p.Spec.Association = true; return p }(),
			want:   []string{"spec.association: " + forb},
		},
		"resourceSelectors required": {
			policy: apitest.MakePropagationPolicy("web", "prod").Obj(),
			want:   []string{"spec.resourceSelectors: " + req},
		},
		"selector needs apiVersion and kind": {
			policy: apitest.MakePropagationPolicy("web", "prod").Selector(api.ResourceSelector{Name: "x"}).Obj(),
			want:   []string{"spec.resourceSelectors[0].apiVersion: " + req, "spec.resourceSelectors[0].kind: " + req},
		},
		"selector label selector must be valid": {
			policy: apitest.MakePropagationPolicy("web", "prod").SelectLabels("v1", "ConfigMap", map[string]string{"bad key!": "v"}).Obj(),
			want:   []string{"spec.resourceSelectors[0].labelSelector.matchLabels: " + inv},
		},
		"preemption Always needs names": {
			policy: apitest.MakePropagationPolicy("web", "prod").SelectKind("apps/v1", "Deployment").Preemption(api.PreemptAlways).Obj(),
			want:   []string{"spec.resourceSelectors[0].name: " + inv},
		},
		"weights at least 1": {
			policy: web().Weight(1, "east").Weight(0, "west").Obj(),
			want:   []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[1].weight: " + inv},
		},
		"static weight target is validated": {
			policy: web().StaticWeight(*aff().Field("planet", corev1.NodeSelectorOpIn, "earth").Obj(), 1).Obj(),
			want:   []string{"spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.fieldSelector.matchExpressions[0].key: " + uns},
		},
		"static and dynamic weights exclusive": {
			policy: web().Weight(1, "east").DynamicWeight().Obj(),
			want:   []string{"spec.placement.replicaScheduling.weightPreference.dynamicWeight: " + forb},
		},
		"replica scheduling enums": {
			policy: web().Divided("Even").Type("Split").Obj(),
			want: []string{
				"spec.placement.replicaScheduling.replicaSchedulingType: " + uns,
				"spec.placement.replicaScheduling.replicaDivisionPreference: " + uns,
			},
		},
		"dynamicWeight enum": {
			policy: func() *api.PropagationPolicy {
				p := web().DynamicWeight().Obj()
				p.Spec.Placement.ReplicaScheduling.WeightPreference.DynamicWeight = "Cost"
				return p
			}(),
			want: []string{"spec.placement.replicaScheduling.weightPreference.dynamicWeight: " + uns},
		},
		"several selectors are fine": {
			policy: web().Selector(api.ResourceSelector{APIVersion: "v1", Kind: "Pod"}).Obj(),
		},
		"spread field and label together": {
			policy: func() *api.PropagationPolicy {
				p := web().Spread(api.SpreadByFieldCluster, 1, 0).Obj()
				p.Spec.Placement.SpreadConstraints[0].SpreadByLabel = "topology"
				return p
			}(),
			want: []string{"spec.placement.spreadConstraints[0].spreadByLabel: " + forb},
		},
		"maxGroups below minGroups": {
			policy: web().Spread(api.SpreadByFieldCluster, 3, 2).Obj(),
			want:   []string{"spec.placement.spreadConstraints[0].maxGroups: " + inv},
		},
		"maxGroups 0 means unlimited": {
			policy: web().Spread(api.SpreadByFieldCluster, 3, 0).Obj(),
		},
		"negative groups": {
			policy: web().Spread(api.SpreadByFieldCluster, -1, -1).Obj(),
			want: []string{
				"spec.placement.spreadConstraints[0].maxGroups: " + inv,
				"spec.placement.spreadConstraints[0].minGroups: " + inv,
			},
		},
		"region spread needs a cluster spread": {
			policy: web().Spread(api.SpreadByFieldRegion, 1, 2).Obj(),
			want:   []string{"spec.placement.spreadConstraints: " + inv},
		},
		"zone and provider spread need a cluster spread too": {
			policy: web().Spread(api.SpreadByFieldZone, 1, 2).Spread(api.SpreadByFieldProvider, 1, 1).Obj(),
			want:   []string{"spec.placement.spreadConstraints: " + inv},
		},
		"label spread alone is fine": {
			policy: web().SpreadByLabel("topology.example.com/rack", 1, 2).Obj(),
		},
		"each field once": {
			policy: web().Spread(api.SpreadByFieldCluster, 1, 0).Spread(api.SpreadByFieldCluster, 1, 0).Obj(),
			want:   []string{"spec.placement.spreadConstraints[1].spreadByField: " + inv},
		},
		"spreadByField enum": {
			policy: web().Spread("rack", 1, 0).Spread(api.SpreadByFieldCluster, 1, 0).Obj(),
			want:   []string{"spec.placement.spreadConstraints[0].spreadByField: " + uns},
		},
		"clusterAffinity and clusterAffinities exclusive": {
			policy: web().ClusterNames("east").AffinityTerm("primary", aff().Names("east").Obj()).Obj(),
			want:   []string{"spec.placement.clusterAffinities: " + forb},
		},
		"affinity names non-empty, unique, short": {
			policy: web().AffinityTerm("", aff().Names("a").Obj()).AffinityTerm("g", nil).AffinityTerm("g", nil).
				AffinityTerm(strings.Repeat("x", 33), nil).Obj(),
			want: []string{
				"spec.placement.clusterAffinities[0].affinityName: " + req,
				"spec.placement.clusterAffinities[2].affinityName: " + dup,
				"spec.placement.clusterAffinities[3].affinityName: " + long,
			},
		},
		"affinity label selector valid": {
			policy: web().Affinity(aff().LabelExpression("tier", "Near", "prod").Obj()).Obj(),
			want:   []string{"spec.placement.clusterAffinity.labelSelector.matchExpressions[0].operator: " + inv},
		},
		"field selector keys and operators": {
			policy: web().Affinity(aff().Field("planet", corev1.NodeSelectorOpIn, "x").
				Field(api.RegionField, corev1.NodeSelectorOpExists).
				Field(api.ZoneField, corev1.NodeSelectorOpNotIn).
				Field(api.ProviderField, corev1.NodeSelectorOpIn, "aws").Obj()).Obj(),
			want: []string{
				"spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key: " + uns,
				"spec.placement.clusterAffinity.fieldSelector.matchExpressions[1].operator: " + uns,
				"spec.placement.clusterAffinity.fieldSelector.matchExpressions[2].values: " + req,
			},
		},
		"term affinity is validated inline": {
			policy: web().AffinityTerm("g", aff().Names("").Obj()).Obj(),
			want:   []string{"spec.placement.clusterAffinities[0].clusterNames[0]: " + req},
		},
		"tolerations": {
			policy: web().
				Toleration(corev1.Toleration{Key: "a", Operator: corev1.TolerationOpLt, Value: "1"}).
				Toleration(corev1.Toleration{Operator: corev1.TolerationOpEqual, Value: "v"}).
				Toleration(corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr[int64](5)}).
				Toleration(corev1.Toleration{Key: "c", Operator: corev1.TolerationOpExists, Value: "v"}).
				Toleration(corev1.Toleration{Key: "d", Effect: "Sometimes"}).
				Toleration(corev1.Toleration{Operator: corev1.TolerationOpExists}).Obj(),
			want: []string{
				"spec.placement.clusterTolerations[0].operator: " + uns,
				"spec.placement.clusterTolerations[1].operator: " + inv,
				"spec.placement.clusterTolerations[2].effect: " + inv,
				"spec.placement.clusterTolerations[3].value: " + inv,
				"spec.placement.clusterTolerations[4].effect: " + uns,
			},
		},
		"policy enums": {
			policy: func() *api.PropagationPolicy {
				p := web().Preemption("Sometimes").ConflictResolution("Merge").Obj()
				p.Spec.ActivationPreference = "Eager"
				return p
			}(),
			want: []string{
				"spec.preemption: " + uns,
				"spec.conflictResolution: " + uns,
				"spec.activationPreference: " + uns,
			},
		},
		"application failover needs propagateDeps and sane seconds": {
			policy: web().Failover(&api.FailoverBehavior{Application: &api.ApplicationFailoverBehavior{
				DecisionConditions: api.DecisionConditions{TolerationSeconds: ptr[int32](-1)},
				PurgeMode:          api.PurgeModeDirectly,
				GracePeriodSeconds: ptr[int32](10),
				StatePreservation:  &api.StatePreservation{Rules: []api.StatePreservationRule{{AliasLabelName: "-bad", JSONPath: ""}}},
			}}).Obj(),
			want: []string{
				"spec.propagateDeps: " + inv,
				"spec.failover.application.decisionConditions.tolerationSeconds: " + inv,
				"spec.failover.application.gracePeriodSeconds: " + inv,
				"spec.failover.application.statePreservation.rules[0].aliasLabelName: " + inv,
				"spec.failover.application.statePreservation.rules[0].jsonPath: " + req,
			},
		},
		"graceful purge needs a positive grace period": {
			policy: web().PropagateDeps().Failover(&api.FailoverBehavior{Application: &api.ApplicationFailoverBehavior{
				PurgeMode: api.PurgeModeGracefully, GracePeriodSeconds: ptr[int32](0)}}).Obj(),
			want: []string{"spec.failover.application.gracePeriodSeconds: " + inv},
		},
		"purgeMode enum": {
			policy: web().Failover(&api.FailoverBehavior{Cluster: &api.ClusterFailoverBehavior{PurgeMode: "Eventually"}}).Obj(),
			want:   []string{"spec.failover.cluster.purgeMode: " + uns},
		},
		// Karmada's scheduler filters by where the group's other workloads
		// run; flotilla's schedules one template at a time, so it refuses.
		"workloadAffinity is refused": {
			policy: func() *api.PropagationPolicy {
				p := web().Obj()
				p.Spec.Placement.WorkloadAffinity = &api.WorkloadAffinity{AntiAffinity: &api.WorkloadAffinityTerm{GroupByLabelKey: "app.group"}}
				return p
			}(),
			want: []string{"spec.placement.workloadAffinity: " + forb},
		},
		"suspension all and some": {
			policy: func() *api.PropagationPolicy {
				p := web().Obj()
				p.Spec.Suspension = &api.Suspension{Dispatching: ptr(true), DispatchingOnClusters: &api.SuspendClusters{ClusterNames: []string{"east"}}}
				return p
			}(),
			want: []string{"spec.suspension.dispatching: " + inv},
		},
		"schedulePriority": {
			policy: func() *api.PropagationPolicy {
				p := web().Obj()
				p.Spec.SchedulePriority = &api.SchedulePriority{PriorityClassSource: api.PodPriorityClass}
				return p
			}(),
			want: []string{"spec.schedulePriority.priorityClassSource: " + uns, "spec.schedulePriority.priorityClassName: " + req},
		},
		"overflow needs capacity-based division": {
			policy: web().AffinityTerm("idc", aff().Names("a").Obj(), overflow...).Obj(),
			want:   []string{"spec.placement.clusterAffinities[0].overflowAffinities: " + inv},
		},
		"overflow with static weights is rejected": {
			policy: web().Weight(1, "a").AffinityTerm("idc", aff().Names("a").Obj(), overflow...).Obj(),
			want:   []string{"spec.placement.clusterAffinities[0].overflowAffinities: " + inv},
		},
		"overflow with dynamic weight is fine": {
			policy: web().DynamicWeight().AffinityTerm("idc", aff().Names("a").Obj(), overflow...).Obj(),
		},
		"overflow with Aggregated is fine": {
			policy: web().Divided(api.ReplicaDivisionPreferenceAggregated).AffinityTerm("idc", aff().Names("a").Obj(), overflow...).Obj(),
		},
		"overflow needs a primary affinity and unique names": {
			policy: web().Divided(api.ReplicaDivisionPreferenceAggregated).AffinityTerm("idc", nil,
				api.OverflowClusterAffinity{AffinityName: "idc"},
				api.OverflowClusterAffinity{AffinityName: "cloud", ClusterAffinity: *aff().Field("zone", corev1.NodeSelectorOpGt, "1").Obj()},
				api.OverflowClusterAffinity{AffinityName: "cloud"},
				api.OverflowClusterAffinity{}).Obj(),
			want: []string{
				"spec.placement.clusterAffinities[0].overflowAffinities: " + inv,
				"spec.placement.clusterAffinities[0].overflowAffinities[0].affinityName: " + inv,
				"spec.placement.clusterAffinities[0].overflowAffinities[1].fieldSelector.matchExpressions[0].operator: " + uns,
				"spec.placement.clusterAffinities[0].overflowAffinities[2].affinityName: " + inv,
				"spec.placement.clusterAffinities[0].overflowAffinities[3].affinityName: " + req,
			},
		},
		"metadata": {
			policy: apitest.MakePropagationPolicy("Web!", "").SelectKind("v1", "Pod").Obj(),
			want:   []string{"metadata.name: " + inv, "metadata.namespace: " + req},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.policy
			api.DefaultPropagationPolicy(p)
			if diff := cmp.Diff(tc.want, paths(api.ValidatePropagationPolicy(p))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateClusterPropagationPolicyNeedsNoNamespace(t *testing.T) {
	p := apitest.MakeClusterPropagationPolicy("all").SelectKind("v1", "Namespace").ClusterObj()
	if diff := cmp.Diff([]string(nil), paths(api.ValidateClusterPropagationPolicy(p))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	p.Namespace = "prod"
	if diff := cmp.Diff([]string{"metadata.namespace: Forbidden"}, paths(api.ValidateClusterPropagationPolicy(p))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestValidateOverridePolicy(t *testing.T) {
	west := apitest.MakeAffinity().Names("west").Obj()
	op := func() *apitest.OverridePolicyWrapper {
		return apitest.MakeOverridePolicy("o", "prod").SelectKind("apps/v1", "Deployment")
	}
	rule := func(o api.Overriders) *api.OverridePolicy { return op().Rule(west, o).Obj() }
	raw := func(s string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(s)} }
	cases := map[string]struct {
		policy *api.OverridePolicy
		want   []string
	}{
		"valid, every overrider": {
			policy: rule(api.Overriders{
				Plaintext:            []api.PlaintextOverrider{{Path: "/spec/replicas", Operator: api.OverriderOpReplace, Value: raw("2")}, {Path: "/x", Operator: api.OverriderOpRemove}},
				ImageOverrider:       []api.ImageOverrider{{Predicate: &api.ImagePredicate{Path: "/spec/image"}, Component: api.Tag, Operator: api.OverriderOpRemove}},
				CommandOverrider:     []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpAdd, Value: []string{"-v"}}},
				ArgsOverrider:        []api.CommandArgsOverrider{{ContainerName: "app", Operator: api.OverriderOpRemove}},
				LabelsOverrider:      []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"team": "web"}}},
				AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: api.OverriderOpRemove, Value: map[string]string{"example.com/x": ""}}},
				FieldOverrider:       []api.FieldOverrider{{FieldPath: "/data/config", YAML: []api.YAMLPatchOperation{{SubPath: "/a", Operator: api.OverriderOpReplace, Value: raw(`"b"`)}}}},
			}),
		},
		"no selectors is fine for overrides": {
			policy: apitest.MakeOverridePolicy("o", "prod").Rule(nil, api.Overriders{}).Obj(),
		},
		"rules and deprecated fields exclusive": {
			policy: op().Image(west, api.Registry, api.OverriderOpReplace, "eu.io").
				Deprecated(west, api.Overriders{ArgsOverrider: []api.CommandArgsOverrider{{ContainerName: "a", Operator: api.OverriderOpAdd}}}).Obj(),
			want: []string{"spec.targetCluster: Forbidden", "spec.overriders: Forbidden"},
		},
		"plaintext": {
			policy: rule(api.Overriders{Plaintext: []api.PlaintextOverrider{
				{Path: "spec/replicas", Operator: api.OverriderOpAdd},
				{Path: "/a", Operator: "patch"},
				{Path: "/a"},
				{Path: "", Operator: api.OverriderOpRemove, Value: raw("1")},
			}}),
			want: []string{
				"spec.overrideRules[0].overriders.plaintext[0].path: Invalid value",
				"spec.overrideRules[0].overriders.plaintext[1].operator: Unsupported value",
				"spec.overrideRules[0].overriders.plaintext[2].operator: Required value",
				"spec.overrideRules[0].overriders.plaintext[3].path: Required value",
				"spec.overrideRules[0].overriders.plaintext[3].value: Forbidden",
			},
		},
		"image": {
			policy: rule(api.Overriders{ImageOverrider: []api.ImageOverrider{
				{Component: "Digest", Operator: api.OverriderOpRemove},
				{Predicate: &api.ImagePredicate{Path: "spec"}, Component: api.Registry, Operator: api.OverriderOpReplace},
			}}),
			want: []string{
				"spec.overrideRules[0].overriders.imageOverrider[0].component: Unsupported value",
				"spec.overrideRules[0].overriders.imageOverrider[1].predicate.path: Invalid value",
				"spec.overrideRules[0].overriders.imageOverrider[1].value: Required value",
			},
		},
		"command and args": {
			policy: rule(api.Overriders{
				CommandOverrider: []api.CommandArgsOverrider{{Operator: api.OverriderOpAdd}},
				ArgsOverrider:    []api.CommandArgsOverrider{{ContainerName: "a", Operator: api.OverriderOpReplace}},
			}),
			want: []string{
				"spec.overrideRules[0].overriders.commandOverrider[0].containerName: Required value",
				"spec.overrideRules[0].overriders.argsOverrider[0].operator: Unsupported value",
			},
		},
		"labels and annotations": {
			policy: rule(api.Overriders{
				LabelsOverrider:      []api.LabelAnnotationOverrider{{Operator: api.OverriderOpAdd, Value: map[string]string{"a~b": "c"}}},
				AnnotationsOverrider: []api.LabelAnnotationOverrider{{Operator: "set", Value: map[string]string{"a~b": "c"}}},
			}),
			want: []string{
				"spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value",
				"spec.overrideRules[0].overriders.annotationsOverrider[0].operator: Unsupported value",
				"spec.overrideRules[0].overriders.annotationsOverrider[0].value: Invalid value",
			},
		},
		"field overrider": {
			policy: rule(api.Overriders{FieldOverrider: []api.FieldOverrider{
				{FieldPath: "/data/a"},
				{FieldPath: "data/b", JSON: []api.JSONPatchOperation{{SubPath: "x", Operator: api.OverriderOpRemove, Value: raw("1")}},
					YAML: []api.YAMLPatchOperation{{SubPath: "/y", Operator: api.OverriderOpAdd}}},
			}}),
			want: []string{
				"spec.overrideRules[0].overriders.fieldOverrider[0]: Required value",
				"spec.overrideRules[0].overriders.fieldOverrider[1].fieldPath: Invalid value",
				"spec.overrideRules[0].overriders.fieldOverrider[1].yaml: Forbidden",
				"spec.overrideRules[0].overriders.fieldOverrider[1].json[0].subPath: Invalid value",
				"spec.overrideRules[0].overriders.fieldOverrider[1].json[0].value: Forbidden",
			},
		},
		"target clusters are validated": {
			policy: op().Rule(apitest.MakeAffinity().Field("provider", corev1.NodeSelectorOpGt, "1").Obj(), api.Overriders{}).Obj(),
			want:   []string{"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].operator: Unsupported value"},
		},
		"selectors need apiVersion and kind": {
			policy: apitest.MakeOverridePolicy("o", "prod").Selector(api.ResourceSelector{Kind: "Deployment"}).Obj(),
			want:   []string{"spec.resourceSelectors[0].apiVersion: Required value"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api.DefaultOverridePolicy(tc.policy)
			if diff := cmp.Diff(tc.want, paths(api.ValidateOverridePolicy(tc.policy))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCluster(t *testing.T) {
	q := resource.MustParse
	cluster := func(name string, mutate func(*api.Cluster)) *api.Cluster {
		c := &api.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	cases := map[string]struct {
		cluster *api.Cluster
		want    []string
	}{
		"valid": {cluster: cluster("east", func(c *api.Cluster) {
			c.Spec.SyncMode = api.Push
			c.Spec.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}}
			c.Spec.ResourceModels = []api.ResourceModel{
				{Grade: 0, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: q("0"), Max: q("1")}}},
				{Grade: 1, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: q("1"), Max: q("2")}}},
			}
		})},
		"name is a DNS label":        {cluster: cluster("East_1", nil), want: []string{"metadata.name: Invalid value"}},
		"name at most 48 characters": {cluster: cluster(strings.Repeat("a", 49), nil), want: []string{"metadata.name: Invalid value"}},
		"syncMode enum": {
			cluster: cluster("east", func(c *api.Cluster) { c.Spec.SyncMode = "Poll" }),
			want:    []string{"spec.syncMode: Unsupported value"},
		},
		"taints": {
			cluster: cluster("east", func(c *api.Cluster) {
				c.Spec.Taints = []corev1.Taint{{Key: "a"}, {Key: "b!", Value: "x y", Effect: corev1.TaintEffectNoSchedule},
					{Key: "c", Effect: corev1.TaintEffectNoSchedule}, {Key: "c", Effect: corev1.TaintEffectNoSchedule}}
			}),
			want: []string{"spec.taints[0].effect: Required value", "spec.taints[1].key: Invalid value",
				"spec.taints[1].value: Invalid value", "spec.taints[3]: Duplicate value"},
		},
		"resource models": {
			cluster: cluster("east", func(c *api.Cluster) {
				c.Spec.ResourceModels = []api.ResourceModel{
					{Grade: 1, Ranges: []api.ResourceModelRange{{Name: corev1.ResourceCPU, Min: q("2"), Max: q("1")}}},
					{Grade: 1},
				}
			}),
			want: []string{"spec.resourceModels[0].ranges[0].min: Invalid value",
				"spec.resourceModels[1].grade: Invalid value", "spec.resourceModels[1].ranges: Required value"},
		},
		"node summary": {
			cluster: cluster("east", func(c *api.Cluster) { c.Status.NodeSummary = &api.NodeSummary{TotalNum: 1, ReadyNum: 2} }),
			want:    []string{"status.nodeSummary.readyNum: Invalid value"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, paths(api.ValidateCluster(tc.cluster))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateResourceBinding(t *testing.T) {
	b := &api.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "prod"},
		Spec: api.ResourceBindingSpec{
			Resource:  api.ObjectReference{Kind: "Deployment"},
			Replicas:  -1,
			Clusters:  []api.TargetCluster{{Name: "east", Replicas: 1}, {Name: "east"}, {Replicas: -2}},
			Placement: &api.Placement{ClusterAffinity: apitest.MakeAffinity().Names("").Obj()},
		},
	}
	want := []string{
		"spec.resource.apiVersion: Required value",
		"spec.resource.name: Required value",
		"spec.replicas: Invalid value",
		"spec.clusters[1].name: Duplicate value",
		"spec.clusters[2].name: Required value",
		"spec.clusters[2].replicas: Invalid value",
		"spec.placement.clusterAffinity.clusterNames[0]: Required value",
	}
	if diff := cmp.Diff(want, paths(api.ValidateResourceBinding(b))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
