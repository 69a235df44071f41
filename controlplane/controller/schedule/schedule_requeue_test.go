package schedule

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
)

func TestClusterCouldMove(t *testing.T) {
	cluster := func(name string, labels map[string]string) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	gold := map[string]string{"tier": "gold"}
	goldOnly := &api.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: gold}}
	binding := func(p *api.Placement, placed ...string) *workv1.ResourceBinding {
		rb := &workv1.ResourceBinding{}
		rb.Spec.Placement = p
		for _, n := range placed {
			rb.Spec.Clusters = append(rb.Spec.Clusters, api.TargetCluster{Name: n, Replicas: 1})
		}
		return rb
	}
	evicting := binding(&api.Placement{ClusterAffinity: goldOnly})
	evicting.Spec.GracefulEvictionTasks = []api.GracefulEvictionTask{{FromCluster: "m1"}}
	terms := &api.Placement{ClusterAffinities: []api.ClusterAffinityTerm{
		{AffinityName: "primary", ClusterAffinity: api.ClusterAffinity{ClusterNames: []string{"m2"}}},
		{AffinityName: "backup", ClusterAffinity: *goldOnly},
	}}
	tests := []struct {
		name   string
		rb     *workv1.ResourceBinding
		states []*clusterv1.Cluster
		want   bool
	}{
		{name: "no placement (a dependency) is never scheduled", rb: binding(nil, "m1"), states: []*clusterv1.Cluster{cluster("m1", gold)}},
		{name: "placed on the cluster, outside the affinity", rb: binding(&api.Placement{ClusterAffinity: goldOnly}, "m1"), states: []*clusterv1.Cluster{cluster("m1", nil)}, want: true},
		{name: "evicting from the cluster", rb: evicting, states: []*clusterv1.Cluster{cluster("m1", nil)}, want: true},
		{name: "the affinity admits the cluster", rb: binding(&api.Placement{ClusterAffinity: goldOnly}, "m2"), states: []*clusterv1.Cluster{cluster("m1", gold)}, want: true},
		{name: "the affinity rejects the cluster before and after", rb: binding(&api.Placement{ClusterAffinity: goldOnly}, "m2"), states: []*clusterv1.Cluster{cluster("m1", nil), cluster("m1", map[string]string{"tier": "silver"})}},
		{name: "a label change makes the cluster admissible", rb: binding(&api.Placement{ClusterAffinity: goldOnly}, "m2"), states: []*clusterv1.Cluster{cluster("m1", nil), cluster("m1", gold)}, want: true},
		{name: "a label change makes the cluster inadmissible", rb: binding(&api.Placement{ClusterAffinity: goldOnly}), states: []*clusterv1.Cluster{cluster("m1", gold), cluster("m1", nil)}, want: true},
		{name: "no affinity admits every cluster", rb: binding(&api.Placement{}, "m2"), states: []*clusterv1.Cluster{cluster("m9", nil)}, want: true},
		{name: "a later affinity term admits the cluster", rb: binding(terms, "m2"), states: []*clusterv1.Cluster{cluster("m1", gold)}, want: true},
		{name: "no affinity term admits the cluster", rb: binding(terms, "m2"), states: []*clusterv1.Cluster{cluster("m1", nil)}},
		{name: "a deleted cluster the binding is placed on", rb: binding(&api.Placement{ClusterAffinity: goldOnly}, "m1"), states: []*clusterv1.Cluster{nil, cluster("m1", gold)}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clusterCouldMove(tt.rb, tt.states...); got != tt.want {
				t.Errorf("clusterCouldMove = %v, want %v", got, tt.want)
			}
		})
	}
}
