package policy

import (
	"fmt"
	"slices"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// Stage is one stage of a staged rollout with the scheduled clusters it
// took (api.RolloutStrategy).
type Stage struct {
	// Name is the stage's name; api.RemainingStageName for the implicit
	// last stage.
	Name string `json:"name"`
	// Clusters are the stage's clusters, sorted by name. A stage that
	// selects none of the scheduled clusters is kept, empty, so a plan
	// shows it.
	Clusters []string `json:"clusters"`
	// Batches split Clusters by the stage's maxConcurrentClusters, in
	// order; one batch of every cluster when it is unset. Empty when
	// Clusters is.
	Batches [][]string `json:"batches,omitempty"`
	// Gate is the stage's gate; nil means the defaults (api.RolloutGate's
	// methods read a nil gate as the defaults).
	Gate *api.RolloutGate `json:"gate,omitempty"`
}

// Step is one batch of one stage: the unit a rollout updates and then
// gates.
type Step struct {
	// Stage is the stage's name.
	Stage string
	// Batch is the batch's index in the stage, from 0; Batches is how many
	// the stage has.
	Batch, Batches int
	// Clusters are the batch's clusters, sorted.
	Clusters []string
	// Gate is the stage's gate (nil: the defaults).
	Gate *api.RolloutGate
}

// String names the step in messages: "stage canary" or "stage rest (batch
// 2 of 3)".
func (s Step) String() string {
	if s.Batches <= 1 {
		return "stage " + s.Stage
	}
	return fmt.Sprintf("stage %s (batch %d of %d)", s.Stage, s.Batch+1, s.Batches)
}

// AssignStages splits the scheduled clusters into the strategy's stages.
// A cluster belongs to the first stage whose clusterAffinity selects it
// (ClusterMatches, so labels and provider, region and zone count); a stage
// without an affinity takes every cluster no earlier stage took. Scheduled
// clusters no stage selects form an implicit last stage named
// api.RemainingStageName with the default gate. Inside a stage clusters are
// in name order and split into batches of maxConcurrentClusters. The result
// is deterministic: it depends on the set of scheduled names, not their
// order.
//
// A nil strategy has no stages (nil, nil). Every scheduled name must have a
// Cluster in clusters; one that has not is an error naming it, since an
// affinity cannot be judged without the cluster's labels and fields.
func AssignStages(strategy *api.RolloutStrategy, scheduled []string, clusters map[string]*api.Cluster) ([]Stage, error) {
	if strategy == nil {
		return nil, nil
	}
	left := slices.Clone(scheduled)
	slices.Sort(left)
	left = slices.Compact(left)
	for _, name := range left {
		if clusters[name] == nil {
			return nil, fmt.Errorf("rollout: scheduled cluster %q is not a known cluster, so no stage can select it", name)
		}
	}
	out := make([]Stage, 0, len(strategy.Stages)+1)
	for i := range strategy.Stages {
		s := &strategy.Stages[i]
		matches := NewClusterMatcher(s.ClusterAffinity)
		stage := Stage{Name: s.Name, Clusters: []string{}, Gate: s.Gate}
		rest := left[:0:0]
		for _, name := range left {
			if matches(clusters[name]) {
				stage.Clusters = append(stage.Clusters, name)
			} else {
				rest = append(rest, name)
			}
		}
		left = rest
		stage.Batches = batches(stage.Clusters, s.MaxConcurrentClusters)
		out = append(out, stage)
	}
	if len(left) > 0 {
		out = append(out, Stage{Name: api.RemainingStageName, Clusters: left, Batches: batches(left, nil)})
	}
	return out, nil
}

// batches splits clusters into runs of at most max (all of them for nil).
func batches(clusters []string, maxConcurrent *int32) [][]string {
	if len(clusters) == 0 {
		return nil
	}
	size := len(clusters)
	if maxConcurrent != nil && *maxConcurrent >= 1 && int(*maxConcurrent) < size {
		size = int(*maxConcurrent)
	}
	var out [][]string
	for start := 0; start < len(clusters); start += size {
		out = append(out, slices.Clone(clusters[start:min(start+size, len(clusters))]))
	}
	return out
}

// Steps flattens stages into the batches a rollout goes through, in order.
// Stages without clusters have no step.
func Steps(stages []Stage) []Step {
	var out []Step
	for _, s := range stages {
		for i, b := range s.Batches {
			out = append(out, Step{Stage: s.Name, Batch: i, Batches: len(s.Batches), Clusters: b, Gate: s.Gate})
		}
	}
	return out
}
