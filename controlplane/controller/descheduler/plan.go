package descheduler

import (
	"fmt"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/estimator"
)

// move is one cluster's share lowered.
type move struct {
	cluster  string
	from, to int32
}

// plan lowers, in a binding's clusters, each cluster's replicas by its
// pods found unschedulable (seen, by cluster), as Karmada's
// updateScheduleResult does, with two differences:
//
//   - the floor is the pods that hold a node in the member, counted from
//     its informers (never more than the cluster's share), where Karmada
//     takes the ready replicas of the binding's aggregated status, which
//     may lag; a ready pod holds a node, so the floor is never lower;
//   - a cluster lowered to 0 leaves the list, as the scheduler leaves out
//     a cluster it gives no replica.
//
// A cluster with more unschedulable pods than its share (a rollout's
// surge) is left as it is, as in Karmada. clusters is not modified; next
// is nil when nothing moves.
func plan(clusters []api.TargetCluster, seen map[string]estimator.WorkloadReplicas) (next []api.TargetCluster, moves []move) {
	for _, c := range clusters {
		r := seen[c.Name]
		if r.Unschedulable <= 0 || r.Unschedulable > c.Replicas {
			continue
		}
		target := c.Replicas - r.Unschedulable
		if target < r.Bound {
			target = min(r.Bound, c.Replicas)
		}
		if target < c.Replicas {
			moves = append(moves, move{cluster: c.Name, from: c.Replicas, to: target})
		}
	}
	if len(moves) == 0 {
		return nil, nil
	}
	next = make([]api.TargetCluster, 0, len(clusters))
	i := 0
	for _, c := range clusters {
		if i < len(moves) && moves[i].cluster == c.Name {
			c.Replicas = moves[i].to
			i++
		}
		if c.Replicas > 0 {
			next = append(next, c)
		}
	}
	return next, moves
}

// note is the event note of moves: how many replicas left which cluster.
func note(moves []move, threshold fmt.Stringer) string {
	var b strings.Builder
	var total int32
	for i, m := range moves {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d of %d replica(s) from cluster %s", m.from-m.to, m.from, m.cluster)
		total += m.from - m.to
	}
	return fmt.Sprintf("descheduled %s (%d in all): their pods were unschedulable there for more than %s; the scheduler places them where they fit",
		b.String(), total, threshold)
}
