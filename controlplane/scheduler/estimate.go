package scheduler

import (
	"math"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
)

// AvailableReplicas estimates how many more replicas, each requesting
// req.ResourceRequest, fit in the cluster. It follows Karmada's general
// estimator:
//
//   - Without a resource summary nothing fits.
//   - The pod count bounds the result: allocatable − allocated − allocating pods.
//   - Without a resource request the pod count is the answer.
//   - When the cluster reports allocatable modelings and its resource models
//     (Karmada's default ones when it declares none, as Karmada's apiserver
//     writes them) cover every requested resource, the answer comes from
//     the models: for
//     each grade at or above the smallest grade whose lower bounds hold one
//     replica, nodes × replicas one such node holds.
//   - Otherwise, per requested resource, (allocatable − allocated −
//     allocating) / request, with cpu in millicores and everything else in
//     whole units; a requested resource the cluster does not report at all
//     fits nothing. The smallest quotient wins.
//
// The result is capped at math.MaxInt32.
func AvailableReplicas(cluster *api.Cluster, req *api.ReplicaRequirements) int32 {
	return newEstimator(req).available(cluster)
}

// estimator answers AvailableReplicas for one request over many clusters,
// converting the request once.
type estimator struct {
	// wants are the positive requests in estimator units, sorted by name.
	wants []want
}

type want struct {
	name corev1.ResourceName
	n    int64
}

func newEstimator(req *api.ReplicaRequirements) *estimator {
	e := &estimator{}
	if req == nil {
		return e
	}
	for name, q := range req.ResourceRequest {
		if n := scaled(name, q); n > 0 {
			e.wants = append(e.wants, want{name, n})
		}
	}
	sort.Slice(e.wants, func(i, j int) bool { return e.wants[i].name < e.wants[j].name })
	return e
}

func (e *estimator) available(cluster *api.Cluster) int32 {
	summary := cluster.Status.ResourceSummary
	if summary == nil {
		return 0
	}
	pods := allowedPods(summary)
	if pods <= 0 {
		return 0
	}
	if len(e.wants) == 0 {
		return clampInt32(pods)
	}
	if len(summary.AllocatableModelings) > 0 {
		if n, ok := replicasByResourceModels(cluster, e.wants); ok {
			return clampInt32(min(n, pods))
		}
	}
	return clampInt32(min(replicasBySummary(summary, e.wants), pods))
}

// allowedPods is allocatable − allocated − allocating pods, at least zero.
func allowedPods(s *api.ResourceSummary) int64 {
	n := quantityOf(s.Allocatable, corev1.ResourcePods) -
		quantityOf(s.Allocated, corev1.ResourcePods) -
		quantityOf(s.Allocating, corev1.ResourcePods)
	return max(n, 0)
}

// quantityOf reads one resource in the unit the estimator divides in:
// millicores for cpu, whole units for everything else.
func quantityOf(list corev1.ResourceList, name corev1.ResourceName) int64 {
	q, ok := list[name]
	if !ok {
		return 0
	}
	return scaled(name, q)
}

func scaled(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// replicasBySummary divides what is left of each requested resource by the
// request and keeps the smallest quotient.
func replicasBySummary(s *api.ResourceSummary, wants []want) int64 {
	best := int64(math.MaxInt64)
	for _, w := range wants {
		left, ok := leftOf(s, w.name)
		if !ok || left <= 0 {
			return 0
		}
		best = min(best, left/w.n)
	}
	return best
}

// replicasByResourceModels estimates from the node counts per resource model
// grade. It reports false when the models do not describe every requested
// resource, so the caller falls back to the summary.
func replicasByResourceModels(cluster *api.Cluster, wants []want) (int64, bool) {
	declared := api.ResourceModelsOf(&cluster.Spec)
	models := make([]api.ResourceModel, len(declared))
	copy(models, declared)
	sort.SliceStable(models, func(i, j int) bool { return models[i].Grade < models[j].Grade })
	if len(models) == 0 {
		return 0, false
	}

	// lower[k][i] is the lower bound of wants[k] in models[i].
	lower := make([][]int64, len(wants))
	for k, w := range wants {
		lower[k] = make([]int64, len(models))
		for i := range models {
			r, ok := modelRange(models[i], w.name)
			if !ok {
				return 0, false
			}
			lower[k][i] = scaled(w.name, r.Min)
		}
	}

	// The smallest grade whose lower bounds hold one replica of every resource.
	first := 0
	for k, w := range wants {
		grade := slices.IndexFunc(lower[k], func(m int64) bool { return m >= w.n })
		if grade < 0 {
			return 0, true
		}
		first = max(first, grade)
	}

	counts := make(map[uint]int64, len(cluster.Status.ResourceSummary.AllocatableModelings))
	for _, m := range cluster.Status.ResourceSummary.AllocatableModelings {
		counts[m.Grade] += int64(m.Count)
	}
	var total int64
	for i := first; i < len(models); i++ {
		nodes := counts[models[i].Grade]
		if nodes <= 0 {
			continue
		}
		perNode := int64(math.MaxInt64)
		for k, w := range wants {
			perNode = min(perNode, lower[k][i]/w.n)
		}
		if perNode == 0 || perNode == math.MaxInt64 {
			perNode = 1
		}
		total = saturatingAdd(total, saturatingMul(nodes, perNode))
	}
	return total, true
}

func modelRange(m api.ResourceModel, name corev1.ResourceName) (api.ResourceModelRange, bool) {
	for _, r := range m.Ranges {
		if r.Name == name {
			return r, true
		}
	}
	return api.ResourceModelRange{}, false
}

func saturatingAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func saturatingMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
