package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

func ptr[T any](v T) *T { return &v }

// defaulted returns the spec with every scalar default filled in, for
// building expectations.
func defaulted(spec api.PropagationSpec) api.PropagationSpec {
	if spec.Priority == nil {
		spec.Priority = ptr[int32](0)
	}
	if spec.Preemption == "" {
		spec.Preemption = api.PreemptNever
	}
	if spec.ConflictResolution == "" {
		spec.ConflictResolution = api.ConflictAbort
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = api.DefaultSchedulerName
	}
	return spec
}

func TestDefaultPropagationSpec(t *testing.T) {
	cases := map[string]struct {
		namespace string
		in        *apitest.PropagationPolicyWrapper
		want      api.PropagationSpec
	}{
		"no replicaScheduling is Duplicated; selectors inherit the namespace": {
			namespace: "prod",
			in:        apitest.MakePropagationPolicy("p", "prod").SelectKind("apps/v1", "Deployment"),
			want: defaulted(api.PropagationSpec{
				ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}},
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated}},
			}),
		},
		"selector namespace is kept; cluster-wide policy inherits nothing": {
			in: apitest.MakeClusterPropagationPolicy("c").
				Selector(api.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other"}).
				SelectKind("v1", "Secret"),
			want: defaulted(api.PropagationSpec{
				ResourceSelectors: []api.ResourceSelector{
					{APIVersion: "v1", Kind: "ConfigMap", Namespace: "other"},
					{APIVersion: "v1", Kind: "Secret"},
				},
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated}},
			}),
		},
		"Divided without preference is Weighted": {
			in: apitest.MakeClusterPropagationPolicy("c").Divided(""),
			want: defaulted(api.PropagationSpec{Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: api.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: api.ReplicaDivisionPreferenceWeighted}}}),
		},
		"replicaScheduling without type is Divided, as the CRD defaults it": {
			in: apitest.MakeClusterPropagationPolicy("c").Divided(api.ReplicaDivisionPreferenceAggregated).Type(""),
			want: defaulted(api.PropagationSpec{Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: api.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: api.ReplicaDivisionPreferenceAggregated}}}),
		},
		"Duplicated keeps an empty preference": {
			in: apitest.MakeClusterPropagationPolicy("c").Duplicated(),
			want: defaulted(api.PropagationSpec{Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated}}}),
		},
		"spread constraints: empty field is cluster, minGroups 0 is 1, label kept": {
			in: apitest.MakeClusterPropagationPolicy("c").Duplicated().Spread("", 0, 3).
				Spread(api.SpreadByFieldRegion, 2, 0).SpreadByLabel("topology", 0, 0),
			want: defaulted(api.PropagationSpec{Placement: api.Placement{
				ReplicaScheduling: &api.ReplicaSchedulingStrategy{ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated},
				SpreadConstraints: []api.SpreadConstraint{
					{SpreadByField: api.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 3},
					{SpreadByField: api.SpreadByFieldRegion, MinGroups: 2},
					{SpreadByLabel: "topology", MinGroups: 1},
				},
			}}),
		},
		"explicit values are kept": {
			in: apitest.MakeClusterPropagationPolicy("c").Duplicated().Priority(5).
				Preemption(api.PreemptAlways).ConflictResolution(api.ConflictOverwrite),
			want: api.PropagationSpec{
				Priority: ptr[int32](5), Preemption: api.PreemptAlways, ConflictResolution: api.ConflictOverwrite,
				SchedulerName: api.DefaultSchedulerName,
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated}},
			},
		},
		"application failover gets purge mode, grace period and toleration": {
			in: apitest.MakeClusterPropagationPolicy("c").Duplicated().PropagateDeps().
				Failover(&api.FailoverBehavior{Application: &api.ApplicationFailoverBehavior{}, Cluster: &api.ClusterFailoverBehavior{}}),
			want: defaulted(api.PropagationSpec{
				PropagateDeps: true,
				Placement: api.Placement{ReplicaScheduling: &api.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: api.ReplicaSchedulingTypeDuplicated}},
				Failover: &api.FailoverBehavior{
					Application: &api.ApplicationFailoverBehavior{
						DecisionConditions: api.DecisionConditions{TolerationSeconds: ptr[int32](300)},
						PurgeMode:          api.PurgeModeGracefully,
						GracePeriodSeconds: ptr[int32](600),
					},
					Cluster: &api.ClusterFailoverBehavior{PurgeMode: api.PurgeModeGracefully},
				},
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in.Spec()
			api.DefaultPropagationSpec(&got, tc.namespace)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
			again := got
			api.DefaultPropagationSpec(&again, tc.namespace)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("defaulting twice changed the spec (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestDefaultOverrideSpec(t *testing.T) {
	west := apitest.MakeAffinity().Names("west").Obj()
	image := api.Overriders{ImageOverrider: []api.ImageOverrider{{Component: api.Registry, Operator: api.OverriderOpReplace, Value: "eu.io"}}}
	cases := map[string]struct {
		in   *api.OverridePolicy
		want api.OverrideSpec
	}{
		"deprecated targetCluster and overriders become the only rule": {
			in: apitest.MakeOverridePolicy("o", "prod").SelectKind("apps/v1", "Deployment").Deprecated(west, image).Obj(),
			want: api.OverrideSpec{
				ResourceSelectors: []api.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod"}},
				OverrideRules:     []api.RuleWithCluster{{TargetCluster: west, Overriders: image}},
			},
		},
		"deprecated overriders alone apply to every cluster": {
			in:   apitest.MakeOverridePolicy("o", "prod").Deprecated(nil, image).Obj(),
			want: api.OverrideSpec{OverrideRules: []api.RuleWithCluster{{Overriders: image}}},
		},
		"both forms are left for validation to reject": {
			in: apitest.MakeOverridePolicy("o", "prod").Plaintext(nil, "/spec/replicas", api.OverriderOpReplace, "2").Deprecated(west, image).Obj(),
			want: api.OverrideSpec{
				OverrideRules: []api.RuleWithCluster{{Overriders: api.Overriders{Plaintext: []api.PlaintextOverrider{
					{Path: "/spec/replicas", Operator: api.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte("2")}}}}}},
				TargetCluster: west,
				Overriders:    image,
			},
		},
		"nothing to fold": {
			in:   apitest.MakeOverridePolicy("o", "prod").Obj(),
			want: api.OverrideSpec{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api.DefaultOverridePolicy(tc.in)
			if diff := cmp.Diff(tc.want, tc.in.Spec); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultClusterOverridePolicyKeepsSelectorNamespaces(t *testing.T) {
	p := apitest.MakeClusterOverridePolicy("c").SelectKind("v1", "ConfigMap").ClusterObj()
	api.DefaultClusterOverridePolicy(p)
	if diff := cmp.Diff("", p.Spec.ResourceSelectors[0].Namespace); diff != "" {
		t.Errorf("namespace (-want +got):\n%s", diff)
	}
}
