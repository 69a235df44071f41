package render

import (
	"fmt"
	"math"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// replicaFields maps the workloads whose replicas flotilla divides to the
// spec field holding them, as Karmada's default revise-replica interpreter
// does (a Job's replicas are its parallelism). Karmada leaves ReplicaSet to
// a customized interpreter; flotilla revises it too because the scheduler
// divides its replicas like a Deployment's.
var replicaFields = map[schema.GroupKind]string{
	{Group: "apps", Kind: "Deployment"}:  "replicas",
	{Group: "apps", Kind: "StatefulSet"}: "replicas",
	{Group: "apps", Kind: "ReplicaSet"}:  "replicas",
	{Group: "batch", Kind: "Job"}:        "parallelism",
}

// Kinds render treats specially.
var (
	jobKind            = schema.GroupKind{Group: "batch", Kind: "Job"}
	serviceKind        = schema.GroupKind{Kind: "Service"}
	serviceAccountKind = schema.GroupKind{Kind: "ServiceAccount"}
)

// reviseReplicas sets the workload's replica field to the cluster's share.
// As Karmada's ApplyReplica does, it changes the field only when the
// template sets it: a template without it runs the kind's default everywhere.
func reviseReplicas(obj *unstructured.Unstructured, replicas int32) error {
	field, ok := replicaFields[obj.GroupVersionKind().GroupKind()]
	if !ok {
		return nil
	}
	return setIfPresent(obj, field, int64(replicas))
}

// setIfPresent replaces spec.<field> when the template has it.
func setIfPresent(obj *unstructured.Unstructured, field string, value int64) error {
	if _, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", field); err != nil || !found {
		return err
	}
	if _, err := specInt(obj, field); err != nil {
		return err
	}
	return unstructured.SetNestedField(obj.Object, value, "spec", field)
}

// specInt reads a whole number from spec.<field>, whatever numeric type the
// decoder used.
func specInt(obj *unstructured.Unstructured, field string) (int64, error) {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", field)
	switch n := v.(type) {
	case int64:
		return n, nil
	case float64:
		// Converting a float beyond int64 is implementation-defined in Go,
		// so such values are refused before the conversion.
		if n >= -(1<<63) && n < 1<<63 && n == float64(int64(n)) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("spec.%s is %v, not a whole number", field, v)
}

// specCount reads spec.<field> as a count that fits the int32 Kubernetes
// declares for it (a Job's completions, like a workload's replicas, see
// plan.Replicas). The bound also keeps jobCompletions' weight × completions
// product inside int64: 5e18 completions used to overflow and render
// negative counts.
func specCount(obj *unstructured.Unstructured, field string) (int64, error) {
	n, err := specInt(obj, field)
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
	if obj.GroupVersionKind().GroupKind() != jobKind {
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
