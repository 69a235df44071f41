package schedule

import (
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	clusterv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/cluster/v1alpha1"
	workv1 "github.com/flotilla-io/terraform-provider-flotilla/controlplane/apis/work/v1alpha1"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Which bindings a Cluster event can move (issue 20). The scheduler used to
// requeue every binding of the fleet whenever any Cluster changed in a way
// that can move placements; a cluster flapping Ready ↔ NotReady then
// rescheduled 10,000 bindings every few seconds. A Cluster can only change
// the placement of a binding that
//   - is placed on it, or is being evicted from it (taints, deletion and
//     readiness move or keep its replicas there), or
//   - has an affinity that admits it, before or after the change (it may
//     now receive replicas, or no longer may).
// A binding whose every affinity group rejects the Cluster in both states
// cannot be placed on it whatever its taints, capacity or conditions, and
// its other clusters did not change: scheduling it again gives the same
// result. A binding without a placement (a dependency) is not scheduled.

// clusterCouldMove reports whether a change of the Cluster, seen before and
// after (either may be nil: created, deleted), can change the binding's
// placement.
func clusterCouldMove(rb *workv1.ResourceBinding, states ...*clusterv1.Cluster) bool {
	if rb.Spec.Placement == nil {
		return false
	}
	engine := make([]*api.Cluster, 0, len(states))
	for _, c := range states {
		if c == nil {
			continue
		}
		if placedOn(&rb.Spec, c.Name) {
			return true
		}
		e := c.Engine()
		engine = append(engine, &e)
	}
	for _, g := range affinityGroups(rb.Spec.Placement) {
		matches := policy.NewClusterMatcher(g)
		for _, c := range engine {
			if matches(c) {
				return true
			}
		}
	}
	return false
}

// placedOn reports whether the binding has replicas on the cluster or is
// evicting them from it.
func placedOn(spec *api.ResourceBindingSpec, name string) bool {
	for i := range spec.Clusters {
		if spec.Clusters[i].Name == name {
			return true
		}
	}
	for i := range spec.GracefulEvictionTasks {
		if spec.GracefulEvictionTasks[i].FromCluster == name {
			return true
		}
	}
	return false
}

// affinityGroups lists every cluster group a placement can select from: its
// cluster affinity, or each term of its cluster affinities with their
// overflow groups. A placement without any selects every cluster: one nil
// group, which NewClusterMatcher matches to everything.
func affinityGroups(p *api.Placement) []*api.ClusterAffinity {
	if len(p.ClusterAffinities) == 0 {
		return []*api.ClusterAffinity{p.ClusterAffinity}
	}
	var groups []*api.ClusterAffinity
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		groups = append(groups, &term.ClusterAffinity)
		for j := range term.OverflowAffinities {
			groups = append(groups, &term.OverflowAffinities[j].ClusterAffinity)
		}
	}
	return groups
}
