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
//   - When the cluster reports allocatable modelings, the answer comes from
//     its resource models (Karmada's default ones when it declares none, as
//     Karmada's apiserver writes them): per counted node, the replicas its
//     grade's lower bounds hold, at most 110 (replicasByResourceModels).
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

// bySummary is the summed free resources' answer for a cluster whose
// resource models answer available (replicasByResourceModels), so a
// decision can say when the models, which grade node by node, hold fewer;
// false for a cluster estimated from its summary already.
func (e *estimator) bySummary(cluster *api.Cluster) (int64, bool) {
	summary := cluster.Status.ResourceSummary
	if len(e.wants) == 0 || summary == nil || len(summary.AllocatableModelings) == 0 || len(cluster.Spec.ResourceModels) == 0 {
		return 0, false
	}
	return min(replicasBySummary(summary, e.wants), allowedPods(summary)), true
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

// maxPodsPerModelNode is the pod slots of one virtual node of a resource
// model grade: Kubernetes' default per-node limit, which Karmada's general
// estimator gives every model node (it cannot know the real node's).
const maxPodsPerModelNode = 110

// replicasByResourceModels is Karmada's current general estimator over
// allocatable modelings (getMaximumReplicasBasedOnResourceModels): every
// node counted in a grade the Cluster declares becomes a virtual node whose capacity is the
// grade's lower bounds, with the lowest grade's bounds at zero (Karmada's
// apiserver standardizes them so) and maxPodsPerModelNode pod slots. A
// replica fits a virtual node while each requested resource's bound still
// covers it; a requested resource the grade does not bound is not there,
// so that node holds none. For one replica shape, first-fit over the
// virtual nodes is the sum of what each holds. The node selector, affinity
// and tolerations are not checked: virtual nodes have no labels or taints,
// as in Karmada. It reports false when the Cluster declares no
// spec.resourceModels or has no summary, and the caller then divides the
// summary: Karmada's apiserver writes its default models into every
// Cluster's spec, flotilla's does not, so a Cluster graded only by the
// default models for its status is estimated from its summary, and a
// workload requesting a resource those models do not bound (a GPU) is not
// refused everywhere by a rule its owner never chose.
func replicasByResourceModels(cluster *api.Cluster, wants []want) (int64, bool) {
	if cluster.Status.ResourceSummary == nil || len(cluster.Spec.ResourceModels) == 0 {
		return 0, false
	}
	models := slices.Clone(cluster.Spec.ResourceModels)
	sort.SliceStable(models, func(i, j int) bool { return models[i].Grade < models[j].Grade })
	counts := make(map[uint]int64, len(cluster.Status.ResourceSummary.AllocatableModelings))
	for _, m := range cluster.Status.ResourceSummary.AllocatableModelings {
		counts[m.Grade] += int64(max(m.Count, 0))
	}
	var total int64
	for i, m := range models {
		nodes := counts[m.Grade]
		if nodes == 0 || i == 0 {
			// The lowest grade's capacity is zero: it holds no replica
			// that requests anything.
			continue
		}
		perNode := int64(maxPodsPerModelNode)
		for _, w := range wants {
			r, ok := modelRange(m, w.name)
			if !ok {
				perNode = 0
				break
			}
			perNode = min(perNode, scaled(w.name, r.Min)/w.n)
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
