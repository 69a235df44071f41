package scheduler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api/apitest"
)

// verdict is a filter's answer, for comparison with cmp.
type verdict struct {
	OK     bool
	Reason string
}

func deployment() api.ObjectReference {
	return api.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
}

// taintAdded is when the taints of taintedSince were added.
var taintAdded = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// taintedSince sets the timeAdded of every taint of c.
func taintedSince(c *api.Cluster, at time.Time) *api.Cluster {
	for i := range c.Spec.Taints {
		c.Spec.Taints[i].TimeAdded = &metav1.Time{Time: at}
	}
	return c
}

func TestFilters(t *testing.T) {
	gpuTaint := func() *apitest.ClusterWrapper {
		return apitest.MakeCluster("east").Taint("dedicated", "gpu", corev1.TaintEffectNoSchedule)
	}
	tolerateGPU := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu"}
	cases := []struct {
		name     string
		filter   filter
		cluster  *api.Cluster
		binding  Binding
		groups   []*api.ClusterAffinity
		previous map[string]int32
		want     verdict
		wantTier int
	}{
		// Deletion.
		{name: "deleting cluster", filter: filterDeleting,
			cluster: apitest.MakeCluster("east").Deleting().Obj(),
			want:    verdict{false, "cluster is being deleted"}},
		{name: "live cluster", filter: filterDeleting,
			cluster: apitest.MakeCluster("east").Obj(), want: verdict{true, ""}},

		// API enablement.
		{name: "API enabled", filter: filterAPIEnablement,
			cluster: apitest.MakeCluster("east").APIs("apps/v1/Deployment").Obj(),
			binding: Binding{Resource: deployment()}, want: verdict{true, ""}},
		{name: "API missing from a complete list", filter: filterAPIEnablement,
			cluster: apitest.MakeCluster("east").APIs("v1/ConfigMap", "apps/v1/StatefulSet").Obj(),
			binding: Binding{Resource: deployment()},
			want:    verdict{false, "API apps/v1, kind=Deployment is not enabled"}},
		// Karmada's APIEnablement.Filter: bindingSpec.TargetContains passes
		// a cluster the template runs on before the API is looked at.
		{name: "API missing from a complete list where it ran before (Karmada APIEnablement.Filter)", filter: filterAPIEnablement,
			cluster:  apitest.MakeCluster("east").APIs("v1/ConfigMap").Obj(),
			binding:  Binding{Resource: deployment()},
			previous: map[string]int32{"east": 2},
			want:     verdict{true, ""}},
		{name: "API missing from a partial list", filter: filterAPIEnablement,
			cluster: apitest.MakeCluster("east").APIs("v1/ConfigMap").PartialAPIs().Obj(),
			binding: Binding{Resource: deployment()},
			want:    verdict{false, "API apps/v1, kind=Deployment is not in the partially collected API enablements"}},
		{name: "API missing from a partial list where it ran before", filter: filterAPIEnablement,
			cluster:  apitest.MakeCluster("east").APIs("v1/ConfigMap").PartialAPIs().Obj(),
			binding:  Binding{Resource: deployment()},
			previous: map[string]int32{"east": 2},
			want:     verdict{true, ""}},
		{name: "nothing collected yet", filter: filterAPIEnablement,
			cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{Resource: deployment()}, want: verdict{true, ""}},
		{name: "same kind, other group version", filter: filterAPIEnablement,
			cluster: apitest.MakeCluster("east").APIs("extensions/v1beta1/Deployment").Obj(),
			binding: Binding{Resource: deployment()},
			want:    verdict{false, "API apps/v1, kind=Deployment is not enabled"}},

		// Taints.
		{name: "untolerated NoSchedule", filter: filterTaints, cluster: gpuTaint().Obj(),
			want: verdict{false, "untolerated taint dedicated=gpu:NoSchedule"}},
		{name: "tolerated NoSchedule", filter: filterTaints, cluster: gpuTaint().Obj(),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{tolerateGPU}}},
			want:    verdict{true, ""}},
		{name: "toleration for another value", filter: filterTaints, cluster: gpuTaint().Obj(),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: "dedicated", Value: "fpga"}}}},
			want: verdict{false, "untolerated taint dedicated=gpu:NoSchedule"}},
		{name: "Exists with empty key tolerates everything", filter: filterTaints, cluster: gpuTaint().Obj(),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Operator: corev1.TolerationOpExists}}}},
			want: verdict{true, ""}},
		{name: "toleration for another effect", filter: filterTaints, cluster: gpuTaint().Obj(),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}}},
			want: verdict{false, "untolerated taint dedicated=gpu:NoSchedule"}},
		{name: "NoSchedule does not evict what runs there", filter: filterTaints, cluster: gpuTaint().Obj(),
			previous: map[string]int32{"east": 1}, want: verdict{true, ""}},
		{name: "NoExecute applies even where it ran", filter: filterTaints,
			cluster:  apitest.MakeCluster("east").Taint(api.TaintClusterNotReady, "", corev1.TaintEffectNoExecute).Obj(),
			previous: map[string]int32{"east": 1},
			want:     verdict{false, "untolerated taint cluster.karmada.io/not-ready:NoExecute"}},
		{name: "NoExecute tolerated until tolerationSeconds pass (Karmada needEviction)", filter: filterTaints,
			cluster: taintedSince(apitest.MakeCluster("east").Taint(api.TaintClusterNotReady, "", corev1.TaintEffectNoExecute).Obj(), taintAdded),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: api.TaintClusterNotReady, Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](60)}}},
				Now: taintAdded.Add(2 * time.Minute)},
			previous: map[string]int32{"east": 1},
			want:     verdict{false, "taint cluster.karmada.io/not-ready:NoExecute is no longer tolerated: the toleration's tolerationSeconds have passed"}},
		{name: "NoExecute tolerated while tolerationSeconds run", filter: filterTaints,
			cluster: taintedSince(apitest.MakeCluster("east").Taint(api.TaintClusterNotReady, "", corev1.TaintEffectNoExecute).Obj(), taintAdded),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: api.TaintClusterNotReady, Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](600)}}},
				Now: taintAdded.Add(2 * time.Minute)},
			previous: map[string]int32{"east": 1},
			want:     verdict{true, ""}},
		{name: "PreferNoSchedule is not a filter", filter: filterTaints,
			cluster: apitest.MakeCluster("east").Taint("soft", "", corev1.TaintEffectPreferNoSchedule).Obj(),
			want:    verdict{true, ""}},
		{name: "numeric operators are not supported", filter: filterTaints,
			cluster: apitest.MakeCluster("east").Taint("tier", "3", corev1.TaintEffectNoSchedule).Obj(),
			binding: Binding{Placement: api.Placement{ClusterTolerations: []corev1.Toleration{
				{Key: "tier", Operator: corev1.TolerationOpGt, Value: "1"}}}},
			want: verdict{false, "untolerated taint tier=3:NoSchedule"}},

		// Affinity.
		{name: "no affinity", filter: filterAffinity, cluster: apitest.MakeCluster("east").Obj(),
			want: verdict{true, ""}},
		{name: "affinity by name", filter: filterAffinity, cluster: apitest.MakeCluster("east").Obj(),
			groups: []*api.ClusterAffinity{apitest.MakeAffinity().Names("east").Obj()},
			want:   verdict{true, ""}},
		{name: "excluded", filter: filterAffinity, cluster: apitest.MakeCluster("east").Obj(),
			groups: []*api.ClusterAffinity{apitest.MakeAffinity().Names("east").Exclude("east").Obj()},
			want:   verdict{false, "cluster does not match the placement cluster affinity"}},
		{name: "second overflow group", filter: filterAffinity,
			cluster: apitest.MakeCluster("east").Region("us").Obj(),
			groups: []*api.ClusterAffinity{
				apitest.MakeAffinity().Names("west").Obj(),
				apitest.MakeAffinity().Names("north").Obj(),
				apitest.MakeAffinity().Field("region", corev1.NodeSelectorOpIn, "us").Obj(),
			},
			want: verdict{true, ""}, wantTier: 2},

		// Spread-field presence.
		{name: "no region to spread by", filter: filterSpreadFields, cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{byField(api.SpreadByFieldRegion, 1, 2)}}},
			want:    verdict{false, "cluster has no region to spread by"}},
		{name: "no zone to spread by", filter: filterSpreadFields, cluster: apitest.MakeCluster("east").Region("us").Obj(),
			binding: Binding{Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{byField(api.SpreadByFieldZone, 1, 2)}}},
			want:    verdict{false, "cluster has no zone to spread by"}},
		{name: "no provider to spread by", filter: filterSpreadFields, cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{byField(api.SpreadByFieldProvider, 1, 2)}}},
			want:    verdict{false, "cluster has no provider to spread by"}},
		{name: "no label to spread by", filter: filterSpreadFields, cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{{SpreadByLabel: "rack"}}}},
			want:    verdict{false, `cluster has no "rack" label to spread by`}},
		{name: "deprecated zone field counts", filter: filterSpreadFields,
			cluster: apitest.MakeCluster("east").Zone("a").Provider("aws").Obj(),
			binding: Binding{Placement: api.Placement{SpreadConstraints: []api.SpreadConstraint{
				byField(api.SpreadByFieldZone, 1, 2), byField(api.SpreadByFieldProvider, 1, 1), byField(api.SpreadByFieldCluster, 1, 1)}}},
			want: verdict{true, ""}},

		// Eviction.
		{name: "under graceful eviction", filter: filterEviction, cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{EvictingClusters: []string{"east"}},
			want:    verdict{false, "template is being evicted from the cluster"}},
		{name: "another cluster under eviction", filter: filterEviction, cluster: apitest.MakeCluster("east").Obj(),
			binding: Binding{EvictingClusters: []string{"west"}}, want: verdict{true, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc := &filterContext{binding: &tc.binding, previous: tc.previous, groups: tc.groups,
				evicting: map[string]bool{}}
			for _, n := range tc.binding.EvictingClusters {
				fc.evicting[n] = true
			}
			ok, reason := tc.filter(fc, tc.cluster)
			if diff := cmp.Diff(tc.want, verdict{ok, reason}); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if fc.tier != tc.wantTier {
				t.Errorf("tier = %d, want %d", fc.tier, tc.wantTier)
			}
		})
	}
}

func TestFilterOrder(t *testing.T) {
	// A cluster failing several filters reports the first one in order.
	c := apitest.MakeCluster("east").APIs("v1/ConfigMap").Taint("k", "v", corev1.TaintEffectNoSchedule).Obj()
	fc := &filterContext{binding: &Binding{Resource: deployment()}, groups: []*api.ClusterAffinity{
		apitest.MakeAffinity().Names("west").Obj()}}
	why, ok := runFilters(fc, c)
	if diff := cmp.Diff(verdict{false, "API apps/v1, kind=Deployment is not enabled"}, verdict{ok, why}); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
}
