package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// UnknownCluster is a cluster name a placement lists that is no cluster of
// the fleet: most often a typo ("esat" for "east"), which otherwise shows
// only as every cluster failing the cluster affinity.
type UnknownCluster struct {
	// Path is the name's place in the policy, e.g.
	// spec.placement.clusterAffinity.clusterNames[0].
	Path string
	// Name is the name as written.
	Name string
	// Closest is the fleet's cluster name nearest to Name (fewest edits,
	// a swap of two neighbours counting one; ties by name), empty in an
	// empty fleet.
	Closest string
}

// String reads `spec.placement.clusterAffinity.clusterNames[0] "esat" is
// not a cluster of the fleet (the closest is "east")`.
func (u UnknownCluster) String() string {
	s := fmt.Sprintf("%s %q is not a cluster of the fleet", u.Path, u.Name)
	if u.Closest != "" {
		s += fmt.Sprintf(" (the closest is %q)", u.Closest)
	}
	return s
}

// unknownClusters lists the clusterNames of groups (each at the path of
// the same index) that are not among known, in the groups' order.
func unknownClusters(groups []*api.ClusterAffinity, paths []string, known []string) []UnknownCluster {
	var out []UnknownCluster
	var set map[string]bool
	for i, g := range groups {
		for j, name := range g.ClusterNames {
			if set == nil {
				set = make(map[string]bool, len(known))
				for _, k := range known {
					set[k] = true
				}
			}
			if set[name] {
				continue
			}
			out = append(out, UnknownCluster{Path: fmt.Sprintf("%s.clusterNames[%d]", paths[i], j), Name: name, Closest: closestName(name, known)})
		}
	}
	return out
}

// closestName is the name of names nearest to s by edit distance; ties go
// to the name first in ascending order.
func closestName(s string, names []string) string {
	best, bestDist := "", -1
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	for _, n := range sorted {
		if d := editDistance(s, n); bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of two adjacent bytes
// each count one, so "esat" is one edit from "east".
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownPrefix is what a FitError says first about the names its
// placement lists that no cluster has, with the policy when known.
func unknownPrefix(policy string, unknown []UnknownCluster) string {
	if len(unknown) == 0 {
		return ""
	}
	parts := make([]string, len(unknown))
	for i, u := range unknown {
		parts[i] = u.String()
	}
	s := strings.Join(parts, "; ") + "; "
	if policy != "" {
		s = policy + ": " + s
	}
	return s
}
