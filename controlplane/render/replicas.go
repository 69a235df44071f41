package render

import (
	"fmt"
	"math"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/interpret"
)

// specCount reads spec.<field> as a count that fits the int32 Kubernetes
// declares for it (a Job's completions, like a workload's replicas, see
// interpret.GetReplicas). The bound also keeps jobCompletions' weight × completions
// product inside int64: 5e18 completions used to overflow and render
// negative counts.
func specCount(obj *unstructured.Unstructured, field string) (int64, error) {
	n, err := interpret.SpecInt(obj, field)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("spec.%s: want a non-negative integer of at most %d, got %d", field, math.MaxInt32, n)
	}
	return n, nil
}

// jobCompletions divides a Job's spec.completions across the clusters in
// proportion to the parallelism each received, as Karmada's ensureWork does.
// It returns nil when the template leaves completions unset (a work-queue
// Job) or nothing was assigned.
//
// Karmada sorts by weight and breaks ties at random; flotilla breaks them by
// cluster name so the same input always renders the same works.
func jobCompletions(obj *unstructured.Unstructured, targets []Target) (map[string]int64, error) {
	if obj.GroupVersionKind().GroupKind() != interpret.JobKind {
		return nil, nil
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "completions"); !found {
		return nil, nil
	}
	completions, err := specCount(obj, "completions")
	if err != nil {
		return nil, err
	}
	type share struct {
		name   string
		weight int64
	}
	shares := make([]share, 0, len(targets))
	var sum int64
	for _, t := range targets {
		shares = append(shares, share{name: t.Cluster.Name, weight: int64(t.Replicas)})
		sum += int64(t.Replicas)
	}
	if sum == 0 {
		return nil, nil
	}
	sort.SliceStable(shares, func(i, j int) bool {
		if shares[i].weight != shares[j].weight {
			return shares[i].weight > shares[j].weight
		}
		return shares[i].name < shares[j].name
	})
	out := make(map[string]int64, len(shares))
	remain := completions
	for _, s := range shares {
		n := s.weight * completions / sum
		out[s.name] = n
		remain -= n
	}
	for _, s := range shares {
		if remain <= 0 {
			break
		}
		out[s.name]++
		remain--
	}
	return out, nil
}
