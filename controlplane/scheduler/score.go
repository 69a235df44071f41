package scheduler

import (
	"cmp"
	"slices"
	"strings"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// maxScore is what one scorer gives its favourite clusters.
const maxScore = 100

// scorer gives a feasible cluster points; a cluster's score is the sum over
// all scorers.
type scorer func(fc *filterContext, c *api.Cluster) int64

// scorers are summed in this order. The slice is never modified.
var scorers = []scorer{
	scoreLocality,
}

// scoreLocality favours clusters that already run the template, so a
// template stays where it is unless something forces it to move. Unlike
// Karmada, which scores locality only for workloads with replicas, flotilla
// also keeps non-workloads (ConfigMaps, Services) sticky.
func scoreLocality(fc *filterContext, c *api.Cluster) int64 {
	if _, ok := fc.previous[fc.name(c)]; ok {
		return maxScore
	}
	return 0
}

// candidate is a cluster that passed the filters, with what later stages
// need to know about it.
type candidate struct {
	cluster *api.Cluster
	// clusterName is cluster.Name, kept here so that sorting, selection
	// and assignment do not reach into the cluster object, which at
	// thousands of clusters is out of cache.
	clusterName string
	// tier is the affinity group the cluster belongs to: 0 for the primary
	// group, i for the i-th overflow group.
	tier int
	// score is the sum of the scorers.
	score int64
	// available is how many more replicas fit, when estimated.
	available int64
	// clusterWide is the general estimate when the per-node estimate was
	// smaller (and is available); zero otherwise.
	clusterWide int64
	// previous is how many replicas the previous result put here.
	previous int32
	// index is the cluster's position in the snapshot (int32 to pack
	// beside previous: candidates are copied while sorting).
	index int32
}

// capacity is how many replicas the cluster can hold in total: what fits
// now plus what already runs there, as Karmada counts it when grouping.
func (c *candidate) capacity() int64 { return c.available + int64(c.previous) }

func (c *candidate) name() string {
	if c.clusterName == "" {
		// Built without the name, as some table tests do.
		return c.cluster.Name
	}
	return c.clusterName
}

// sortCandidates orders candidates by preference: earlier affinity tier
// first, then higher score, then more capacity (Karmada orders by available
// replicas after the score), then name.
func sortCandidates(cands []candidate) {
	slices.SortFunc(cands, compareCandidates)
}

func compareCandidates(a, b candidate) int {
	if a.tier != b.tier {
		return cmp.Compare(a.tier, b.tier)
	}
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	if ca, cb := a.capacity(), b.capacity(); ca != cb {
		return cmp.Compare(cb, ca)
	}
	return strings.Compare(a.name(), b.name())
}
