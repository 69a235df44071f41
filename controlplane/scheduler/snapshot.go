package scheduler

import (
	"encoding/json"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/api"
	"github.com/flotilla-io/terraform-provider-flotilla/controlplane/policy"
)

// Snapshot is a fleet prepared for scheduling many templates in a row. It
// computes each cluster's free pods, CPU and memory, its name, and whether
// it is being deleted or tainted once, into a compact slice that the
// filters and the estimator read instead of the cluster objects and three
// resource maps per cluster per decision: at thousands of clusters those
// are out of cache, and reaching them, not the division algorithms,
// dominated scheduling (issue 23).
//
// A Snapshot is read-only once built and safe to use from several
// goroutines. It must be rebuilt when a cluster's status changes.
type Snapshot struct {
	clusters []*api.Cluster
	facts    []clusterFacts

	// apis holds, per apiVersion and kind scheduled so far, what each
	// cluster serves of it: the first template of a kind pays for reading
	// the API enablements, the others do not.
	mu   sync.Mutex
	apis map[[2]string][]apiState
	// affinities holds, per cluster affinity (keyed by its JSON encoding),
	// which clusters it selects: the templates of one policy share their
	// affinity, and only the first of them evaluates the label selector
	// over every cluster.
	affinities map[string][]bool

	// names ranks the clusters by name for spread selection.
	names nameRanks
	// groupings holds, per spread constraint's label and field, each
	// cluster's group.
	groupings map[[2]string]*spreadGroups
}

// maxAffinities bounds the affinity cache of one Snapshot. A Snapshot
// lives for one fleet version, so the bound is only reached by thousands
// of distinct policies; the cache then starts over.
const maxAffinities = 4096

// selected is which clusters the affinity selects, computed on first use.
// The answer depends only on the affinity and on each cluster's name,
// labels and fields, which are fixed while the Snapshot is in use.
func (s *Snapshot) selected(affinity *api.ClusterAffinity) []bool {
	raw, err := json.Marshal(affinity)
	if err != nil {
		// Not reachable for the API type; evaluate without the cache.
		return selectedBy(s.clusters, affinity)
	}
	key := string(raw)
	s.mu.Lock()
	if sel, ok := s.affinities[key]; ok {
		s.mu.Unlock()
		return sel
	}
	s.mu.Unlock()
	// Evaluated outside the lock: two goroutines may both compute the
	// same affinity once; the results are equal.
	sel := selectedBy(s.clusters, affinity)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.affinities == nil || len(s.affinities) >= maxAffinities {
		s.affinities = map[string][]bool{}
	}
	s.affinities[key] = sel
	return sel
}

// selectedBy evaluates affinity over every cluster.
func selectedBy(clusters []*api.Cluster, affinity *api.ClusterAffinity) []bool {
	matches := policy.NewClusterMatcher(affinity)
	sel := make([]bool, len(clusters))
	for i, c := range clusters {
		sel[i] = matches(c)
	}
	return sel
}

// served is what each cluster serves of the kind, computed on first use.
func (s *Snapshot) served(gv, kind string) []apiState {
	key := [2]string{gv, kind}
	s.mu.Lock()
	defer s.mu.Unlock()
	if states, ok := s.apis[key]; ok {
		return states
	}
	states := make([]apiState, len(s.clusters))
	for i, c := range s.clusters {
		states[i] = servedBy(c, gv, kind)
	}
	if s.apis == nil {
		s.apis = map[[2]string][]apiState{}
	}
	s.apis[key] = states
	return states
}

// clusterFacts is what the filters need of a cluster regardless of the
// template, and what the estimator needs of its resource summary, in the
// units it divides in (see quantityOf).
type clusterFacts struct {
	// name is the cluster's name.
	name string
	// deleting is true when the cluster has a deletion timestamp.
	deleting bool
	// tainted is true when the cluster has any taint.
	tainted bool
	// noProvider, noRegion and noZone say which spread fields the cluster
	// lacks.
	noProvider, noRegion, noZone bool

	// summary is false when the cluster has no resource summary: nothing fits.
	summary bool
	// models is true when the summary has allocatable modelings.
	models bool
	// pods is allocatable − allocated − allocating pods, at least zero.
	pods int64
	// cpu and memory are allocatable − allocated − allocating; hasCPU and
	// hasMemory say whether the cluster reports the resource as allocatable.
	cpu, memory       int64
	hasCPU, hasMemory bool
}

// NewSnapshot prepares clusters for scheduling. The clusters are not
// copied: they must not change while the Snapshot is in use.
func NewSnapshot(clusters []*api.Cluster) *Snapshot {
	s := &Snapshot{clusters: clusters, facts: make([]clusterFacts, len(clusters))}
	for i, c := range clusters {
		f := &s.facts[i]
		*f = freeOf(c.Status.ResourceSummary)
		f.name, f.deleting, f.tainted = c.Name, !c.DeletionTimestamp.IsZero(), len(c.Spec.Taints) > 0
		f.noProvider, f.noRegion, f.noZone = c.Spec.Provider == "", c.Spec.Region == "", zoneOf(c) == ""
	}
	return s
}

// Schedule is the package's Schedule over the snapshot's clusters, with the
// same result for the same input.
func (s *Snapshot) Schedule(b Binding) (Result, error) {
	return schedule(s.clusters, s, b)
}

func freeOf(summary *api.ResourceSummary) clusterFacts {
	if summary == nil {
		return clusterFacts{}
	}
	f := clusterFacts{summary: true, models: len(summary.AllocatableModelings) > 0, pods: allowedPods(summary)}
	f.cpu, f.hasCPU = leftOf(summary, corev1.ResourceCPU)
	f.memory, f.hasMemory = leftOf(summary, corev1.ResourceMemory)
	return f
}

// leftOf is allocatable − allocated − allocating of one resource; false
// when the cluster does not report the resource as allocatable.
func leftOf(s *api.ResourceSummary, name corev1.ResourceName) (int64, bool) {
	have, ok := s.Allocatable[name]
	if !ok {
		return 0, false
	}
	return scaled(name, have) - quantityOf(s.Allocated, name) - quantityOf(s.Allocating, name), true
}

// availableFrom is available with the summary's figures read from f; the
// cluster is only read for resource models and for requested resources
// other than CPU and memory.
func (e *estimator) availableFrom(f *clusterFacts, cluster *api.Cluster) int32 {
	if !f.summary || f.pods <= 0 {
		return 0
	}
	if len(e.wants) == 0 {
		return clampInt32(f.pods)
	}
	if f.models {
		if n, ok := replicasByResourceModels(cluster, e.wants); ok {
			return clampInt32(min(n, f.pods))
		}
	}
	best := f.pods
	for _, w := range e.wants {
		var left int64
		var ok bool
		switch w.name {
		case corev1.ResourceCPU:
			left, ok = f.cpu, f.hasCPU
		case corev1.ResourceMemory:
			left, ok = f.memory, f.hasMemory
		default:
			left, ok = leftOf(cluster.Status.ResourceSummary, w.name)
		}
		if !ok || left <= 0 {
			return 0
		}
		best = min(best, left/w.n)
	}
	return clampInt32(best)
}
