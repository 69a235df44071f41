package apitest

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// AffinityWrapper builds a ClusterAffinity:
// MakeAffinity().Names("east").Field("region", corev1.NodeSelectorOpIn, "us").Obj().
type AffinityWrapper struct {
	a api.ClusterAffinity
}

// MakeAffinity starts an empty affinity, which matches every cluster.
func MakeAffinity() *AffinityWrapper {
	return &AffinityWrapper{}
}

// Names appends to clusterNames.
func (w *AffinityWrapper) Names(names ...string) *AffinityWrapper {
	w.a.ClusterNames = append(w.a.ClusterNames, names...)
	return w
}

// Exclude appends to exclude.
func (w *AffinityWrapper) Exclude(names ...string) *AffinityWrapper {
	w.a.ExcludeClusters = append(w.a.ExcludeClusters, names...)
	return w
}

// Label adds a matchLabels entry to the label selector.
func (w *AffinityWrapper) Label(key, value string) *AffinityWrapper {
	if w.a.LabelSelector == nil {
		w.a.LabelSelector = &metav1.LabelSelector{}
	}
	if w.a.LabelSelector.MatchLabels == nil {
		w.a.LabelSelector.MatchLabels = map[string]string{}
	}
	w.a.LabelSelector.MatchLabels[key] = value
	return w
}

// LabelExpression adds a matchExpressions entry to the label selector.
func (w *AffinityWrapper) LabelExpression(key string, op metav1.LabelSelectorOperator, values ...string) *AffinityWrapper {
	if w.a.LabelSelector == nil {
		w.a.LabelSelector = &metav1.LabelSelector{}
	}
	w.a.LabelSelector.MatchExpressions = append(w.a.LabelSelector.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values})
	return w
}

// Field adds a field selector expression on provider, region or zone.
func (w *AffinityWrapper) Field(key string, op corev1.NodeSelectorOperator, values ...string) *AffinityWrapper {
	if w.a.FieldSelector == nil {
		w.a.FieldSelector = &api.FieldSelector{}
	}
	w.a.FieldSelector.MatchExpressions = append(w.a.FieldSelector.MatchExpressions,
		corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values})
	return w
}

// Obj returns the built affinity.
func (w *AffinityWrapper) Obj() *api.ClusterAffinity {
	a := w.a
	return &a
}

// PropagationPolicyWrapper builds a PropagationPolicy or a
// ClusterPropagationPolicy (the spec is the same; Obj and ClusterObj choose):
// MakePropagationPolicy("web", "default").SelectName("apps/v1", "Deployment", "web").Weight(1, "east").Obj().
type PropagationPolicyWrapper struct {
	meta metav1.ObjectMeta
	spec api.PropagationSpec
}

// MakePropagationPolicy starts a namespaced policy with no selectors.
func MakePropagationPolicy(name, namespace string) *PropagationPolicyWrapper {
	return &PropagationPolicyWrapper{meta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
}

// MakeClusterPropagationPolicy starts a cluster-wide policy with no selectors.
func MakeClusterPropagationPolicy(name string) *PropagationPolicyWrapper {
	return &PropagationPolicyWrapper{meta: metav1.ObjectMeta{Name: name}}
}

// Selector appends a resource selector.
func (w *PropagationPolicyWrapper) Selector(rs api.ResourceSelector) *PropagationPolicyWrapper {
	w.spec.ResourceSelectors = append(w.spec.ResourceSelectors, rs)
	return w
}

// SelectKind appends a selector matching every object of a kind.
func (w *PropagationPolicyWrapper) SelectKind(apiVersion, kind string) *PropagationPolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind})
}

// SelectName appends a selector matching one object by name.
func (w *PropagationPolicyWrapper) SelectName(apiVersion, kind, name string) *PropagationPolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name})
}

// SelectLabels appends a selector matching objects of a kind by labels.
func (w *PropagationPolicyWrapper) SelectLabels(apiVersion, kind string, matchLabels map[string]string) *PropagationPolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind,
		LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}})
}

// Priority sets spec.priority.
func (w *PropagationPolicyWrapper) Priority(p int32) *PropagationPolicyWrapper {
	w.spec.Priority = &p
	return w
}

// Preemption sets spec.preemption.
func (w *PropagationPolicyWrapper) Preemption(p api.PreemptionBehavior) *PropagationPolicyWrapper {
	w.spec.Preemption = p
	return w
}

// ConflictResolution sets spec.conflictResolution.
func (w *PropagationPolicyWrapper) ConflictResolution(c api.ConflictResolution) *PropagationPolicyWrapper {
	w.spec.ConflictResolution = c
	return w
}

// PropagateDeps sets spec.propagateDeps.
func (w *PropagationPolicyWrapper) PropagateDeps() *PropagationPolicyWrapper {
	w.spec.PropagateDeps = true
	return w
}

// Failover sets spec.failover.
func (w *PropagationPolicyWrapper) Failover(f *api.FailoverBehavior) *PropagationPolicyWrapper {
	w.spec.Failover = f
	return w
}

// Affinity sets placement.clusterAffinity.
func (w *PropagationPolicyWrapper) Affinity(a *api.ClusterAffinity) *PropagationPolicyWrapper {
	w.spec.Placement.ClusterAffinity = a
	return w
}

// ClusterNames sets placement.clusterAffinity to the named clusters.
func (w *PropagationPolicyWrapper) ClusterNames(names ...string) *PropagationPolicyWrapper {
	return w.Affinity(MakeAffinity().Names(names...).Obj())
}

// AffinityTerm appends a placement.clusterAffinities term, with optional
// overflow groups.
func (w *PropagationPolicyWrapper) AffinityTerm(name string, a *api.ClusterAffinity, overflow ...api.OverflowClusterAffinity) *PropagationPolicyWrapper {
	term := api.ClusterAffinityTerm{AffinityName: name, OverflowAffinities: overflow}
	if a != nil {
		term.ClusterAffinity = *a
	}
	w.spec.Placement.ClusterAffinities = append(w.spec.Placement.ClusterAffinities, term)
	return w
}

// Toleration appends a placement.clusterTolerations entry.
func (w *PropagationPolicyWrapper) Toleration(t corev1.Toleration) *PropagationPolicyWrapper {
	w.spec.Placement.ClusterTolerations = append(w.spec.Placement.ClusterTolerations, t)
	return w
}

// Spread appends a spread constraint by field.
func (w *PropagationPolicyWrapper) Spread(field api.SpreadFieldValue, minGroups, maxGroups int) *PropagationPolicyWrapper {
	w.spec.Placement.SpreadConstraints = append(w.spec.Placement.SpreadConstraints,
		api.SpreadConstraint{SpreadByField: field, MinGroups: minGroups, MaxGroups: maxGroups})
	return w
}

// SpreadByLabel appends a spread constraint by label key.
func (w *PropagationPolicyWrapper) SpreadByLabel(key string, minGroups, maxGroups int) *PropagationPolicyWrapper {
	w.spec.Placement.SpreadConstraints = append(w.spec.Placement.SpreadConstraints,
		api.SpreadConstraint{SpreadByLabel: key, MinGroups: minGroups, MaxGroups: maxGroups})
	return w
}

func (w *PropagationPolicyWrapper) replicaScheduling() *api.ReplicaSchedulingStrategy {
	if w.spec.Placement.ReplicaScheduling == nil {
		w.spec.Placement.ReplicaScheduling = &api.ReplicaSchedulingStrategy{}
	}
	return w.spec.Placement.ReplicaScheduling
}

func (w *PropagationPolicyWrapper) weightPreference() *api.ClusterPreferences {
	rs := w.Divided(api.ReplicaDivisionPreferenceWeighted).replicaScheduling()
	if rs.WeightPreference == nil {
		rs.WeightPreference = &api.ClusterPreferences{}
	}
	return rs.WeightPreference
}

// Duplicated sets replicaSchedulingType Duplicated.
func (w *PropagationPolicyWrapper) Duplicated() *PropagationPolicyWrapper {
	w.replicaScheduling().ReplicaSchedulingType = api.ReplicaSchedulingTypeDuplicated
	return w
}

// Divided sets replicaSchedulingType Divided with the division preference.
func (w *PropagationPolicyWrapper) Divided(pref api.ReplicaDivisionPreference) *PropagationPolicyWrapper {
	rs := w.replicaScheduling()
	rs.ReplicaSchedulingType = api.ReplicaSchedulingTypeDivided
	rs.ReplicaDivisionPreference = pref
	return w
}

// Type sets replicaSchedulingType as is, even to a value Duplicated and
// Divided do not cover, for defaulting and validation tests.
func (w *PropagationPolicyWrapper) Type(t api.ReplicaSchedulingType) *PropagationPolicyWrapper {
	w.replicaScheduling().ReplicaSchedulingType = t
	return w
}

// Weight sets Divided/Weighted and appends a static weight for the named
// clusters.
func (w *PropagationPolicyWrapper) Weight(weight int64, clusterNames ...string) *PropagationPolicyWrapper {
	return w.StaticWeight(*MakeAffinity().Names(clusterNames...).Obj(), weight)
}

// StaticWeight sets Divided/Weighted and appends a static weight.
func (w *PropagationPolicyWrapper) StaticWeight(target api.ClusterAffinity, weight int64) *PropagationPolicyWrapper {
	wp := w.weightPreference()
	wp.StaticWeightList = append(wp.StaticWeightList, api.StaticClusterWeight{TargetCluster: target, Weight: weight})
	return w
}

// DynamicWeight sets Divided/Weighted by available replicas.
func (w *PropagationPolicyWrapper) DynamicWeight() *PropagationPolicyWrapper {
	w.weightPreference().DynamicWeight = api.DynamicWeightByAvailableReplicas
	return w
}

// Deleting marks the policy as being deleted.
func (w *PropagationPolicyWrapper) Deleting() *PropagationPolicyWrapper {
	t := metav1.Unix(0, 0)
	w.meta.DeletionTimestamp = &t
	return w
}

// Spec returns a copy of the built spec.
func (w *PropagationPolicyWrapper) Spec() api.PropagationSpec {
	return *w.spec.DeepCopy()
}

// Obj returns the built PropagationPolicy.
func (w *PropagationPolicyWrapper) Obj() *api.PropagationPolicy {
	return &api.PropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: api.KindPropagationPolicy},
		ObjectMeta: *w.meta.DeepCopy(),
		Spec:       w.Spec(),
	}
}

// ClusterObj returns the built ClusterPropagationPolicy; the namespace, if
// any, is dropped.
func (w *PropagationPolicyWrapper) ClusterObj() *api.ClusterPropagationPolicy {
	meta := *w.meta.DeepCopy()
	meta.Namespace = ""
	return &api.ClusterPropagationPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: api.KindClusterPropagationPolicy},
		ObjectMeta: meta,
		Spec:       w.Spec(),
	}
}

// OverridePolicyWrapper builds an OverridePolicy or a ClusterOverridePolicy:
// MakeOverridePolicy("eu", "default").SelectKind("apps/v1", "Deployment").Image(MakeAffinity().Names("west").Obj(), api.Registry, api.OverriderOpReplace, "eu.io").Obj().
type OverridePolicyWrapper struct {
	meta metav1.ObjectMeta
	spec api.OverrideSpec
}

// MakeOverridePolicy starts a namespaced override policy with no selectors
// and no rules.
func MakeOverridePolicy(name, namespace string) *OverridePolicyWrapper {
	return &OverridePolicyWrapper{meta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
}

// MakeClusterOverridePolicy starts a cluster-wide override policy.
func MakeClusterOverridePolicy(name string) *OverridePolicyWrapper {
	return &OverridePolicyWrapper{meta: metav1.ObjectMeta{Name: name}}
}

// Selector appends a resource selector.
func (w *OverridePolicyWrapper) Selector(rs api.ResourceSelector) *OverridePolicyWrapper {
	w.spec.ResourceSelectors = append(w.spec.ResourceSelectors, rs)
	return w
}

// SelectKind appends a selector matching every object of a kind.
func (w *OverridePolicyWrapper) SelectKind(apiVersion, kind string) *OverridePolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind})
}

// SelectName appends a selector matching one object by name.
func (w *OverridePolicyWrapper) SelectName(apiVersion, kind, name string) *OverridePolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name})
}

// SelectLabels appends a selector matching objects of a kind by labels.
func (w *OverridePolicyWrapper) SelectLabels(apiVersion, kind string, matchLabels map[string]string) *OverridePolicyWrapper {
	return w.Selector(api.ResourceSelector{APIVersion: apiVersion, Kind: kind,
		LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}})
}

// Rule appends an override rule; a nil target matches every cluster.
func (w *OverridePolicyWrapper) Rule(target *api.ClusterAffinity, o api.Overriders) *OverridePolicyWrapper {
	w.spec.OverrideRules = append(w.spec.OverrideRules, api.RuleWithCluster{TargetCluster: target, Overriders: o})
	return w
}

// Image appends a rule with one image overrider.
func (w *OverridePolicyWrapper) Image(target *api.ClusterAffinity, component api.ImageComponent, op api.OverriderOperator, value string) *OverridePolicyWrapper {
	return w.Rule(target, api.Overriders{ImageOverrider: []api.ImageOverrider{{Component: component, Operator: op, Value: value}}})
}

// Plaintext appends a rule with one plaintext overrider; value is raw JSON
// (empty for none).
func (w *OverridePolicyWrapper) Plaintext(target *api.ClusterAffinity, path string, op api.OverriderOperator, value string) *OverridePolicyWrapper {
	p := api.PlaintextOverrider{Path: path, Operator: op}
	if value != "" {
		p.Value = apiextensionsv1.JSON{Raw: []byte(value)}
	}
	return w.Rule(target, api.Overriders{Plaintext: []api.PlaintextOverrider{p}})
}

// Deprecated sets the deprecated top-level targetCluster and overriders.
func (w *OverridePolicyWrapper) Deprecated(target *api.ClusterAffinity, o api.Overriders) *OverridePolicyWrapper {
	w.spec.TargetCluster = target
	w.spec.Overriders = o
	return w
}

// Deleting marks the policy as being deleted.
func (w *OverridePolicyWrapper) Deleting() *OverridePolicyWrapper {
	t := metav1.Unix(0, 0)
	w.meta.DeletionTimestamp = &t
	return w
}

// Obj returns the built OverridePolicy.
func (w *OverridePolicyWrapper) Obj() *api.OverridePolicy {
	return &api.OverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: api.KindOverridePolicy},
		ObjectMeta: *w.meta.DeepCopy(),
		Spec:       *w.spec.DeepCopy(),
	}
}

// ClusterObj returns the built ClusterOverridePolicy; the namespace, if
// any, is dropped.
func (w *OverridePolicyWrapper) ClusterObj() *api.ClusterOverridePolicy {
	meta := *w.meta.DeepCopy()
	meta.Namespace = ""
	return &api.ClusterOverridePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: api.PolicyGroupVersion.String(), Kind: api.KindClusterOverridePolicy},
		ObjectMeta: meta,
		Spec:       *w.spec.DeepCopy(),
	}
}
